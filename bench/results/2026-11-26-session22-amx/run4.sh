#!/bin/bash
# Device run 4 (session 22): the U prefetch, 5 interleaved repetitions on the layers whose U is larger
# than L2: 41164bd (nova_head, no prefetch), one line per reduction step (nova_pfl1, 4ecdcea) and two
# lines per step on AVX-512 (build/nova, covering a 64-wide panel's next panel in two row groups of six);
# every test program of that build; stage profiles of the int8 plans (run 2's timed out).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
run_tests run4_tests.log
timeout 260 python3 bench/results/2026-11-26-session18-amx/ab_multi.py 5 \
  old=build/nova_head,pfl1=build/nova_pfl1,pfl2=build/nova "fp32 16c,fp32" \
  1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,128,28,28,128 8,256,14,14,256 8,512,7,7,512 \
  > "$O/run4_ab_prefetch.log" 2>&1
tail -12 "$O/run4_ab_prefetch.log"
for l in 1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 \
         8,256,14,14,256 8,512,7,7,512 1,64,224,224,64; do
  echo "### $l int8 --calibrate --input-type int8"
  timeout 30 build/nova bench conv --shape "$l" --threads 2 --profile --layout nchw16c --dtype int8 --calibrate \
    --input-type int8
done > "$O/run4_int8_profile.log" 2>&1
grep -E "^###|profile" "$O/run4_int8_profile.log" | cut -c1-200
echo "run4: done"
