#!/bin/bash
# Device run 1 (session 25), code at a219a25 (session 24's last code, not yet run on an AVX-512 or AMX host):
# every test program (the OpenMP sharing, the direct path's segmented micro-kernels on AVX-512), `nova bench
# paths`, the direct path's rows read in place against the im2col copy (build/nova_old = 4585bd3, the commit
# before 9fe323e) on the two layers it changes, the fused blocks of AMX plans with 49 tiles (rounded to 16
# rows, they leave one thread with 32 tiles and the other 17), and issue 6's and issue 5's peer tables.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
lscpu | grep -E 'Model name|^CPU\(s\)|Flags|L2|L3' | cut -c1-300 > "$O/run1_cpu.log"
run_tests run1_tests.log
build/nova bench paths > "$O/run1_paths.log" 2>&1
# The direct path's rows in place: stem 7x7 s2 and VGG's 3x3 first layer, NHWC and NCHW, 3 alternated reps.
for rep in 1 2 3; do
  for l in "1,3,224,224,64 --kernel 7 --stride 2 --pad 3" "1,3,224,224,64 --algorithm direct"; do
    for lay in nhwc nchw; do
      for b in nova_old nova; do
        # shellcheck disable=SC2086  # $l holds several arguments
        printf '%s %s %s %s: ' "$rep" "$l" "$lay" "$b"
        timeout 20 build/$b bench conv --shape $l --threads 2 --layout $lay | tail -1
      done
    done
  done
done > "$O/run1_ab_direct_rows.log" 2>&1
# AMX plans' fused blocks: automatic, phased (-1), two blocks of 25, blocks of 32; 5 alternated reps.
for rep in 1 2 3 4 5; do
  for l in 1,256,14,14,256 1,128,28,28,128; do
    for d in "int8 --calibrate --input-type int8" "bf16 --io bf16"; do
      for blk in 0 -1 25 32; do
        # shellcheck disable=SC2086  # $d holds several arguments
        printf '%s %s %s block %s: ' "$rep" "$l" "$d" "$blk"
        timeout 20 build/nova bench conv --shape "$l" --threads 2 --layout nchw16c --dtype $d --tile-block "$blk" | tail -1
      done
    done
  done
done > "$O/run1_amx_blocks.log" 2>&1
for l in 1,256,14,14,256 1,128,28,28,128; do
  for d in "int8 --calibrate --input-type int8" "bf16 --io bf16"; do
    for blk in 0 -1; do
      # shellcheck disable=SC2086
      timeout 30 build/nova bench conv --shape "$l" --threads 2 --layout nchw16c --dtype $d --tile-block "$blk" --profile
    done
  done
done > "$O/run1_amx_blocks_profile.log" 2>&1
timeout 200 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run1_lowp.json" > "$O/run1_lowp.log" 2>&1
tail -19 "$O/run1_lowp.log"
timeout 150 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run1_fp32.json" > "$O/run1_fp32.log" 2>&1
tail -19 "$O/run1_fp32.log"
echo "run1: done"
