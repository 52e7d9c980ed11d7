#!/bin/bash
# Device run 6 (session 25): fused blocks whose output channels are split in parts (PlanOptions::k_parts;
# the working tree after c95ea5e): every test program (the new FusedOutputChannelParts test on AVX-512 and
# AMX); then 6 alternated repetitions, NCHW16c, 2 threads, same binary:
#   bf16 49-tile layers: automatic (one block of 49 tiles, 2 parts) against --k-parts 1 (blocks of 25);
#   int8 49-tile layers: automatic (blocks of 16) against one block of 49 in 2 parts;
#   1x512x7x7 (phased automatically) in bf16, int8 and FP32 against one fused block of 16 in 2 parts;
#   FP32 1x256x14x14 at F(2,3) (fused 25 and 24) against one block of 49 in 2 parts.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run6_tests.log
I8="int8 --calibrate --input-type int8"
BF="bf16 --io bf16"
configs=(
  "1,256,14,14,256|$BF|--tile 2,3"          "1,256,14,14,256|$BF|--tile 2,3 --k-parts 1"
  "1,128,28,28,128|$BF|--tile 4,3"          "1,128,28,28,128|$BF|--tile 4,3 --k-parts 1"
  "1,256,14,14,256|$I8|--tile 2,3"          "1,256,14,14,256|$I8|--tile 2,3 --tile-block 49 --k-parts 2"
  "1,128,28,28,128|$I8|--tile 4,3"          "1,128,28,28,128|$I8|--tile 4,3 --tile-block 49 --k-parts 2"
  "1,512,7,7,512|$BF|--tile 2,3"            "1,512,7,7,512|$BF|--tile 2,3 --tile-block 16 --k-parts 2"
  "1,512,7,7,512|$I8|--tile 2,3"            "1,512,7,7,512|$I8|--tile 2,3 --tile-block 16 --k-parts 2"
  "1,512,7,7,512|fp32|--tile 2,3"           "1,512,7,7,512|fp32|--tile 2,3 --tile-block 16 --k-parts 2"
  "1,256,14,14,256|fp32|--tile 2,3"         "1,256,14,14,256|fp32|--tile 2,3 --tile-block 49 --k-parts 2"
)
for c in "${configs[@]}"; do
  IFS='|' read -r l d x <<< "$c"
  # shellcheck disable=SC2086
  printf '%s | %s | %s: %s\n' "$l" "$d" "$x" "$(timeout 30 build/nova bench conv --shape $l --threads 2 --layout nchw16c --dtype $d $x --repeat 3 | head -1 | grep -o 'winograd F([0-9],3)\|fused ([^)]*)\|phased' | tr '\n' ' ')"
done > "$O/run6_describe.log" 2>&1
for rep in 1 2 3 4 5 6; do
  for ((i = 0; i < ${#configs[@]}; i += 2)); do
    pair=("${configs[i]}" "${configs[i+1]}")
    [ $((rep % 2)) -eq 0 ] && pair=("${configs[i+1]}" "${configs[i]}")
    for c in "${pair[@]}"; do
      IFS='|' read -r l d x <<< "$c"
      printf '%s %s | %s | %s: ' "$rep" "$l" "$d" "$x"
      # shellcheck disable=SC2086
      timeout 30 build/nova bench conv --shape $l --threads 2 --layout nchw16c --dtype $d $x | tail -1
    done
  done
done > "$O/run6_ab_k_parts.log" 2>&1
echo "run6: done"
