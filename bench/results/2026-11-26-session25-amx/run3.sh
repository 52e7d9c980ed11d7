#!/bin/bash
# Device run 3 (session 25): AMX int8 plans' order decided at the operands' stored sizes (the working
# tree after 609515c, build/nova) against 609515c (build/nova_old): every test program (and run 2's rule's
# test, new since), the plans' descriptions, 6 alternated repetitions on int8 8x256x14x14 (the one layer
# of the set whose order it changes: phased -> fused blocks of 32) in NCHW16c and NCHW, and forced orders
# beside them (--tile-block -1 phased, 32, 64) for int8 and bf16 at 8x256x14x14 and 8x512x7x7.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run3_tests.log
I8="int8 --calibrate --input-type int8"
for b in nova_old nova; do
  # shellcheck disable=SC2086
  timeout 30 build/$b bench conv --shape 8,256,14,14,256 --threads 2 --layout nchw16c --dtype $I8 --repeat 5 | head -1
done > "$O/run3_describe.log" 2>&1
for rep in 1 2 3 4 5 6; do
  order="nova_old nova"; [ $((rep % 2)) -eq 0 ] && order="nova nova_old"
  for lay in nchw16c nchw; do
    for b in $order; do
      printf '%s 8,256,14,14,256 int8 %s %s: ' "$rep" "$lay" "$b"
      # shellcheck disable=SC2086
      timeout 30 build/$b bench conv --shape 8,256,14,14,256 --threads 2 --layout $lay --dtype $I8 | tail -1
    done
  done
  for l in 8,256,14,14,256 8,512,7,7,512; do
    for d in "$I8" "bf16 --io bf16"; do
      for blk in 0 -1 32 64; do
        printf '%s %s %s block %s: ' "$rep" "$l" "${d%% *}" "$blk"
        # shellcheck disable=SC2086
        timeout 30 build/nova bench conv --shape $l --threads 2 --layout nchw16c --dtype $d --tile-block $blk | tail -1
      done
    done
  done
done > "$O/run3_ab_int8_order.log" 2>&1
echo "run3: done"
