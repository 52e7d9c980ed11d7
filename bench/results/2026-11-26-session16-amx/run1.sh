#!/bin/bash
# Device run 1 (session 16): the machine, every test program, and where nova's time goes on AMX
# (`nova bench conv --profile`, 2 threads) on issue 5's layer set.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
{
  date -u
  lscpu | grep -E "Model name|^Model:|^CPU\(s\)|L2 cache|L3 cache|MHz"
  for f in avx512f avx512_bf16 avx512_fp16 avx512_vnni amx_tile amx_bf16 amx_int8; do
    grep -q -w $f /proc/cpuinfo && echo "has $f" || echo "NO $f"
  done
  build/nova bench paths
} > "$O/run1_probe.log" 2>&1
# (As run, the test loop printed "exit $?" after a $(basename) in the same word list, so every status read
# 0; the conv log's FAILED line was the one failure. device_setup.sh's run_tests saves the status first.)
run_tests run1_tests.log
LAYERS="1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 8,256,14,14,256 8,512,7,7,512 1,64,224,224,64"
prof() {  # layer, label, options
  local r
  r=$(timeout 60 build/nova bench conv --shape "$1" --threads 2 --profile "${@:3}" 2>&1)
  echo "### $1 | $2 | ${*:3}"
  echo "$r"
}
{
  date -u
  for L in $LAYERS; do
    prof "$L" "bf16 16c" --dtype bf16 --io bf16 --layout nchw16c
    prof "$L" "int8 16c" --dtype int8 --calibrate --input-type int8 --layout nchw16c
    prof "$L" "fp32 16c" --layout nchw16c
  done
  # The batch-1 deep layers, where bf16 trails oneDNN: each tile and order.
  for L in 1,256,14,14,256 1,512,7,7,512; do
    for T in 2,3 4,3; do
      for B in 0 -1; do
        prof "$L" "bf16 16c tile $T block $B" --dtype bf16 --io bf16 --layout nchw16c --tile $T --tile-block $B
        prof "$L" "int8 16c tile $T block $B" --dtype int8 --calibrate --input-type int8 --layout nchw16c --tile $T --tile-block $B
      done
    done
  done
  date -u
} > "$O/run1_profile.log" 2>&1
grep -E "^###|profile \(" "$O/run1_profile.log" | head -120
