#!/bin/bash
# Device run 1 (session 23), code at 301c9da (session 22's last code, not yet run on this host after its
# review commits): every test program, `nova bench paths`, issue 6's and issue 5's interleaved peer tables
# (3 repetitions), and forced tiles on the layers short of the targets (FP32 on AVX-512, bf16 and int8 on
# AMX), 3 alternated repetitions.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | cut -c1-300 > "$O/run1_cpu.log"
run_tests run1_tests.log
build/nova bench paths > "$O/run1_paths.log" 2>&1
timeout 200 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run1_lowp.json" > "$O/run1_lowp.log" 2>&1
tail -19 "$O/run1_lowp.log"
timeout 150 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run1_fp32.json" > "$O/run1_fp32.log" 2>&1
tail -19 "$O/run1_fp32.log"
b() {  # layer, dtype words, tile
  local l=$1 d=$2 t=$3 tile=()
  [ "$t" = auto ] || tile=(--tile "$t")
  printf '%s %s %s: ' "$l" "$d" "$t"
  # shellcheck disable=SC2086  # $d holds several arguments
  timeout 20 build/nova bench conv --shape "$l" --threads 2 --layout nchw16c --dtype $d "${tile[@]}" | tail -1
}
for _ in 1 2 3; do
  for l in 1,256,14,14,256 1,512,7,7,512 8,512,7,7,512; do
    for t in auto 2,3 4,3 6,3; do b "$l" fp32 "$t"; done
  done
  for l in 8,64,56,56,64 1,64,224,224,64 1,512,7,7,512; do
    for t in auto 2,3 4,3 6,3; do b "$l" "bf16 --io bf16" "$t"; done
  done
  for l in 1,256,14,14,256 8,256,14,14,256 1,64,224,224,64; do
    for t in auto 2,3 4,3 6,3; do b "$l" "int8 --calibrate --input-type int8" "$t"; done
  done
done > "$O/run1_tiles.log" 2>&1
echo "run1: done"
