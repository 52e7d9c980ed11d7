#!/bin/bash
# Device run 3 (session 16): the tests of the new binaries; typed NCHW16c tensors read in place, the
# binary before (build/nova_old, aafdec9) against the one after (build/nova), interleaved
# (ab_binaries.py); profiles of the new one on the 64-channel layers (run 1 has the old ones); issue 6's peer comparison
# with the new binary (bench/peer_interleaved.py).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
D=bench/results/2026-11-26-session16-amx
run_tests run3_tests.log
export PYTHONUNBUFFERED=1
timeout 240 python3 $D/ab_binaries.py 3 "bf16 16c" "int8 16c" "fp16 16c" 2>&1 | tee "$O/run3_ab_typed_in_place.log"
{
  for L in 1,64,56,56,64 8,64,56,56,64 1,64,224,224,64; do
    echo "### $L bf16 16c"; timeout 60 build/nova bench conv --shape $L --threads 2 --dtype bf16 --io bf16 --layout nchw16c --profile 2>&1 | tail -2
    echo "### $L int8 16c"; timeout 60 build/nova bench conv --shape $L --threads 2 --dtype int8 --calibrate --input-type int8 --layout nchw16c --profile 2>&1 | tail -2
  done
} > "$O/run3_profile.log" 2>&1
timeout 200 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run3_lowp.json" > "$O/run3_lowp.log" 2>&1
tail -20 "$O/run3_lowp.log"
