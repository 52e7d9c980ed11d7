#!/bin/bash
# Device run 3 (session 22): the FP32 GEMMs prefetching the next panel of U where U is larger than L2
# (build/nova) against 41164bd (build/nova_head): every test program, an interleaved A/B over the layer
# set (3 repetitions, NCHW16c and NCHW), issue 5's peer table with the new binary, stage profiles.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
run_tests run3_tests.log
timeout 200 python3 bench/results/2026-11-26-session18-amx/ab_multi.py 3 old=build/nova_head,new=build/nova \
  "fp32 16c,fp32" > "$O/run3_ab_prefetch.log" 2>&1
tail -18 "$O/run3_ab_prefetch.log"
timeout 150 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run3_fp32.json" > "$O/run3_fp32.log" 2>&1
tail -19 "$O/run3_fp32.log"
for l in 1,256,14,14,256 1,512,7,7,512 8,512,7,7,512 8,256,14,14,256; do
  for v in "" "--tile 2,3" "--tile 4,3"; do
    echo "### $l $v"
    # shellcheck disable=SC2086  # $v holds several arguments
    timeout 10 build/nova bench conv --shape "$l" --threads 2 --profile --layout nchw16c $v
  done
done > "$O/run3_profile.log" 2>&1
grep -E "^###|median" "$O/run3_profile.log"
echo "run3: done"
