#!/bin/bash
# Device run 1 (session 18): the machine; every test program at HEAD (6c60be3: session 17's code, which
# changed shared paths: huge-page buffers, the plan's rounding_input); issue 5's and issue 6's peer
# comparisons (bench/peer_interleaved.py); session 16's final binary (0dbb640, build/nova_old) against
# HEAD's, interleaved, for FP32 and bf16 on NCHW16c tensors; stage profiles of int8 and bf16 at 2 threads
# on the layers that miss their targets.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
{
  date -u
  lscpu | grep -E "Model name|^Model:|^CPU\(s\)|L2 cache|L3 cache|MHz"
  for f in avx512f avx512_bf16 avx512_fp16 avx512_vnni amx_tile amx_bf16 amx_int8; do
    grep -q -w $f /proc/cpuinfo && echo "has $f" || echo "NO $f"
  done
  grep -m1 -o "AnonHugePages.*" /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/enabled
  build/nova bench paths
} > "$O/run1_probe.log" 2>&1
cat "$O/run1_probe.log"
run_tests run1_tests.log
export PYTHONUNBUFFERED=1
timeout 110 python3 bench/peer_interleaved.py --build build --fp32 --reps 2 --json "$O/run1_fp32.json" > "$O/run1_fp32.log" 2>&1
tail -19 "$O/run1_fp32.log"
timeout 130 python3 bench/peer_interleaved.py --build build --reps 2 --json "$O/run1_lowp.json" > "$O/run1_lowp.log" 2>&1
tail -19 "$O/run1_lowp.log"
{
  for L in 1,64,224,224,64 1,128,28,28,128 1,256,14,14,256 1,64,56,56,64; do
    echo "### $L int8 16c"; timeout 30 build/nova bench conv --shape $L --threads 2 --dtype int8 --calibrate --input-type int8 --layout nchw16c --profile 2>&1 | tail -3
    echo "### $L bf16 16c"; timeout 30 build/nova bench conv --shape $L --threads 2 --dtype bf16 --io bf16 --layout nchw16c --profile 2>&1 | tail -2
  done
} > "$O/run1_profile.log" 2>&1
grep -E "###|profile" "$O/run1_profile.log"
timeout 100 python3 bench/results/2026-11-26-session16-amx/ab_binaries.py 2 "fp32 16c" "bf16 16c" 2>&1 | tee "$O/run1_ab_s16_s17.log"
