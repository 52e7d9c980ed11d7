#!/bin/bash
# Device run 2 (session 25): AMX bf16 plans of 49 tiles in one fused block per thread (the working tree
# after a219a25, build/nova) against a219a25 (build/nova_old, blocks rounded to 16 rows): every test
# program, the plans' descriptions, and 8 alternated repetitions on the two layers of the set with 49 tiles
# at 2 threads (bf16 in and out, NCHW16c and NCHW) and one the rule leaves alone (1x64x56x56).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run2_tests.log
for b in nova_old nova; do
  for l in 1,256,14,14,256 1,128,28,28,128 1,64,56,56,64; do
    timeout 20 build/$b bench conv --shape $l --threads 2 --layout nchw16c --dtype bf16 --io bf16 --repeat 5 | head -1
  done
done > "$O/run2_describe.log" 2>&1
for rep in 1 2 3 4 5 6 7 8; do
  order="nova_old nova"; [ $((rep % 2)) -eq 0 ] && order="nova nova_old"
  for l in 1,256,14,14,256 1,128,28,28,128 1,64,56,56,64; do
    for lay in nchw16c nchw; do
      for b in $order; do
        printf '%s %s %s %s: ' "$rep" "$l" "$lay" "$b"
        timeout 20 build/$b bench conv --shape $l --threads 2 --layout $lay --dtype bf16 --io bf16 | tail -1
      done
    done
  done
done > "$O/run2_ab_bf16_blocks.log" 2>&1
echo "run2: done"
