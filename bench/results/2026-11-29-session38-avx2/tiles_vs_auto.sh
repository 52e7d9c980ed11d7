#!/usr/bin/env bash
# FP32, 2 threads, NCHW16c: the automatic tile against each forced tile, 3 alternated repetitions, on
# session 38's host. Usage: bash tiles_vs_auto.sh [build] > tiles_vs_auto.log
b=${1:-build}
for rep in 1 2 3; do
  for l in 1,256,14,14,256 1,512,7,7,512 8,512,7,7,512 1,64,56,56,64; do
    for t in auto 2,3 4,3 6,3 7,3; do
      tile=(); [ "$t" = auto ] || tile=(--tile "$t")
      printf '%s %s %s: ' "$rep" "$l" "$t"
      "$b"/nova bench conv --shape "$l" --threads 2 --layout nchw16c "${tile[@]}" --format json |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["tile"], "%.3f" % j["min_ms"], "%.3f" % j["median_ms"])'
    done
  done
done
