#!/bin/bash
# Device run 8 (session 25): 2ee84d3's rule also splits int8 8x512x7x7 at F(4,3) (32 tiles: one block, a
# part per thread, where it ran phased), which runs 6-7 did not measure; and int8 8x256x14x14 F(4,3)
# (phased, 1.37x oneDNN's int8 Winograd) with fused blocks split in parts. 6 alternated repetitions,
# NCHW16c, 2 threads, the working tree's build (6e20c5b).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
I8="int8 --calibrate --input-type int8"
for rep in 1 2 3 4 5 6; do
  for c in "8,512,7,7,512|" "8,512,7,7,512|--tile-block -1" \
           "8,256,14,14,256|" "8,256,14,14,256|--tile-block 64 --k-parts 2" "8,256,14,14,256|--tile-block 128 --k-parts 2"; do
    IFS='|' read -r l x <<< "$c"
    printf '%s %s | %s: ' "$rep" "$l" "$x"
    # shellcheck disable=SC2086
    timeout 30 build/nova bench conv --shape $l --threads 2 --layout nchw16c --dtype $I8 --tile 4,3 $x | tail -1
  done
done > "$O/run8_ab_int8_parts.log" 2>&1
echo "run8: done"
