#!/bin/bash
# Device run 2 (session 22), code at 41164bd: every test program on the Xeon (the first run of session
# 21's new ISA kernels on AVX-512: depthwise_row, the NCHW band stores of the direct path), issue 6's and
# issue 5's interleaved peer tables (3 repetitions), stage profiles of the int8 and bf16 plans.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
run_tests run2_tests.log
timeout 230 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run2_lowp.json" > "$O/run2_lowp.log" 2>&1
tail -19 "$O/run2_lowp.log"
timeout 170 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run2_fp32.json" > "$O/run2_fp32.log" 2>&1
tail -19 "$O/run2_fp32.log"
for l in 1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 \
         8,256,14,14,256 8,512,7,7,512 1,64,224,224,64; do
  for v in "int8 --calibrate --input-type int8" "bf16 --io bf16"; do
    echo "### $l $v"
    # shellcheck disable=SC2086  # $v holds several arguments
    timeout 10 build/nova bench conv --shape "$l" --threads 2 --profile --layout nchw16c --dtype $v
  done
done > "$O/run2_profile.log" 2>&1
echo "run2: done"
