#!/bin/bash
# Device run 7 (session 25): the final rule (AMX int8 plans of at most 32 tiles that would run phased run
# one fused block with its output channels in a part per thread; the working tree after c95ea5e,
# build/nova) against c95ea5e (build/nova_old): every test program; the plans' descriptions; 8 alternated
# repetitions of int8 1x512x7x7 (the layer of the set it changes) in NCHW16c and NCHW, and of bf16
# 1x256x14x14 (a control it leaves alone), automatic plans, 2 threads.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run7_tests.log
I8="int8 --calibrate --input-type int8"
for b in nova_old nova; do
  # shellcheck disable=SC2086
  timeout 30 build/$b bench conv --shape 1,512,7,7,512 --threads 2 --layout nchw16c --dtype $I8 --repeat 3 | head -1
done > "$O/run7_describe.log" 2>&1
for rep in 1 2 3 4 5 6 7 8; do
  order="nova_old nova"; [ $((rep % 2)) -eq 0 ] && order="nova nova_old"
  for c in "1,512,7,7,512|$I8|nchw16c" "1,512,7,7,512|$I8|nchw" "1,256,14,14,256|bf16 --io bf16|nchw16c"; do
    IFS='|' read -r l d lay <<< "$c"
    for b in $order; do
      printf '%s %s | %s | %s %s: ' "$rep" "$l" "$d" "$lay" "$b"
      # shellcheck disable=SC2086
      timeout 30 build/$b bench conv --shape $l --threads 2 --layout $lay --dtype $d | tail -1
    done
  done
done > "$O/run7_ab_int8_parts.log" 2>&1
echo "run7: done"
