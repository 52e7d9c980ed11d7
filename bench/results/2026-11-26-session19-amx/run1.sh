#!/bin/bash
# Device run 1 (session 19): typed NCHW16c tensors read in place, staged by runs of tiles (6eff5a9).
# Every test program; abfd8d5's binary (build/nova_old) against the new one, interleaved, int8 and bf16
# on NCHW16c tensors (2 repetitions) and FP32 on three layers (its in-place loop was restructured);
# stage profiles of the new binary; issue 6's peer comparison (bench/peer_interleaved.py, 2 repetitions).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
grep -m1 "model name" /proc/cpuinfo; nproc
run_tests run1_tests.log
export PYTHONUNBUFFERED=1
A=bench/results/2026-11-26-session18-amx/ab_multi.py
timeout 170 python3 $A 2 before=build/nova_old,after=build/nova "int8 16c,bf16 16c" 2>&1 | tee "$O/run1_ab_typed.log"
timeout 40 python3 $A 2 before=build/nova_old,after=build/nova "fp32 16c" 1,64,56,56,64 8,64,56,56,64 1,256,14,14,256 2>&1 | tee "$O/run1_ab_fp32.log"
for l in 1,64,224,224,64 1,128,28,28,128 8,64,56,56,64; do
  for v in "int8 --calibrate --input-type int8" "bf16 --io bf16"; do
    echo "### $l $v"; timeout 20 build/nova bench conv --shape $l --threads 2 --profile --layout nchw16c --dtype $v
  done
done > "$O/run1_profile.log" 2>&1
timeout 150 python3 bench/peer_interleaved.py --build build --reps 2 --json "$O/run1_lowp.json" > "$O/run1_lowp.log" 2>&1
tail -19 "$O/run1_lowp.log"
