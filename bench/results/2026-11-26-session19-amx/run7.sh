#!/bin/bash
# Device run 7 (session 19): the AMX block for 49-tile layers (1x256x14x14 F(2,3), 1x128x28x28 F(4,3)):
# the automatic 16 against 32 (32 + 17 rows between two threads), bf16 and int8 tensors in NCHW16c,
# interleaved, 4 repetitions (session 18's sweep had bf16 1x256x14x14 at 0.70 with 32, int8 at 1.39).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
for l in 1,256,14,14,256 1,128,28,28,128; do
  for v in "bf16 --io bf16" "int8 --calibrate --input-type int8"; do
    declare -A T=()
    for r in 1 2 3 4; do
      for b in 0 32; do
        ms=$(timeout 20 build/nova bench conv --shape $l --threads 2 --layout nchw16c --dtype $v --tile-block $b --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['median_ms'])")
        T[$b]="${T[$b]:-} $ms"
      done
    done
    echo "$l $v | auto:${T[0]} | 32:${T[32]}"
  done
done 2>&1 | tee "$O/run7_blocks49.log"
