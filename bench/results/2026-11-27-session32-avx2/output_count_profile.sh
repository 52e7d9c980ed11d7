#!/usr/bin/env bash
# The thread time of the output stage (output transforms, bias, stores: stage "output" of --profile)
# before and after low-precision plans count their NaN/Inf results there (count_beyond over each
# tile's FP32 results). Unit-scale data (nova bench conv's), 2 threads, REPS runs each, old and new
# alternated. Prints: rep layer dtype layout which wall_ms thread_ms output_ms
# Usage: output_count_profile.sh OLD_NOVA NEW_NOVA [REPS]
set -euo pipefail
old=$1 new=$2 reps=${3:-3}
layers="1,64,56,56,64 1,256,14,14,256 8,64,56,56,64 8,256,14,14,256 1,64,224,224,64"
for r in $(seq "$reps"); do
  for layer in $layers; do
    for dtype in bf16 fp16; do
      for layout in nchw16c nchw; do
        for which in old new; do
          bin=$old; [ "$which" = new ] && bin=$new
          "$bin" bench conv --shape "$layer" --dtype "$dtype" --threads 2 --layout "$layout" --profile --format json |
            python3 -c '
import json, sys
d = json.load(sys.stdin); p = d["profile"]; t = p["thread_ms"]
print(*sys.argv[1:], "%.4f %.4f %.4f" % (p["wall_ms"], p["wall_ms"] * d["threads"], t.get("output", 0.0)))
' "$r" "$layer" "$dtype" "$layout" "$which"
        done
      done
    done
  done
done
