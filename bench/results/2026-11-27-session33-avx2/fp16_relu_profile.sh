#!/usr/bin/env bash
# fp16 plans with a fused ReLU that read the input in place (NCHW16c, NHWC): the thread time of the
# input scan (stage "scales") and of the output stage (which now watches M's first channel block), from
# the stage clocks (--profile), unit-scale data (no overflow). 2 threads, REPS runs, binaries alternated.
# Usage: fp16_relu_profile.sh OLD_NOVA NEW_NOVA [REPS]
# Prints: rep layer layout which wall_ms thread_ms(threads x wall) scales_ms output_ms
set -euo pipefail
old=$1 new=$2 reps=${3:-3}
layers="1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 8,256,14,14,256 8,512,7,7,512 1,64,224,224,64"
for r in $(seq "$reps"); do
  for layer in $layers; do
    for layout in nchw16c nhwc; do
      for which in old new; do
        bin=$old; [ "$which" = new ] && bin=$new
        "$bin" bench conv --shape "$layer" --dtype fp16 --relu --threads 2 --layout "$layout" --profile --format json |
          python3 -c '
import json, sys
d = json.load(sys.stdin); p = d["profile"]; t = p["thread_ms"]
total = p["wall_ms"] * d["threads"]
print(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], "%.4f %.4f %.4f %.4f" % (p["wall_ms"], total, t.get("scales", 0.0), t.get("output", 0.0)))
' "$r" "$layer" "$layout" "$which"
      done
    done
  done
done
