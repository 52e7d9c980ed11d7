#!/usr/bin/env bash
# What fp16's per-call V shift check costs at unit scale (where it never shifts): fp16 plans of the
# issue's layer set, 2 threads, NCHW16c (read in place: a pass over the input first) and NCHW (max |d|
# folded into the blocked copy), the binary before the change and after it alternated REPS times.
# Usage: fp16_shift_cost.sh OLD_NOVA NEW_NOVA [REPS]
set -euo pipefail
old=$1 new=$2 reps=${3:-5}
layers="1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 8,256,14,14,256 8,512,7,7,512 1,64,224,224,64"
for r in $(seq "$reps"); do
  for layer in $layers; do
    for layout in nchw16c nchw; do
      for which in old new; do
        bin=$old; [ "$which" = new ] && bin=$new
        ms=$("$bin" bench conv --shape "$layer" --dtype fp16 --threads 2 --layout "$layout" --format json |
          python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
        echo "$r $layer $layout $which $ms"
      done
    done
  done
done
