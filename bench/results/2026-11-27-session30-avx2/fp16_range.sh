#!/usr/bin/env bash
# fp16 Winograd's relative L2 error (against float64) as the input and bias scale: the default transforms
# with B^T's rows balanced (fp16 plans since session 30) against the same transforms as they were
# (passed with --transform, which is used as given). Layer 1x64x28x28->64, weights uniform in +-0.1,
# input and bias uniform in +-range; one thread; error only (timings are not the point).
# Usage: bench/results/2026-11-27-session30-avx2/fp16_range.sh [path/to/nova]
set -euo pipefail
nova=${1:-build/nova}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$nova" transform --tile 4,3 --points "0, 5/8, -5/8, 14/9, -14/9, inf" \
  --scaling "d1=1,1,1,52488/515431,52488/515431,1;d2=1,1,1,1,1,1" --format json -o "$dir/4,3.json"
"$nova" transform --tile 6,3 --points "0, 1/2, -1/2, 1, -1, 2, -2, inf" --scaling lagrange --format json \
  -o "$dir/6,3.json"
"$nova" transform --tile 8,3 --points "0, 3/7, -3/7, 4/5, -4/5, 5/4, -5/4, 19/8, -19/8, inf" \
  --scaling "d1=1,1,1,1,1,1,-6422528/104110029,1468006400/1842977741139,1,1;d2=1,1,1,1,1,1,1,1,1468006400/1842977741139,1" \
  --format json -o "$dir/8,3.json"
err() { "$nova" bench conv --shape 1,64,28,28,64 --dtype fp16 --threads 1 --repeat 1 --check --format json "$@" |
  python3 -c 'import json,sys; e = json.load(sys.stdin)["rel_l2_error"]; print("non-finite" if e is None else "%.3g" % e)'; }
printf '%-6s %-5s %-8s %-10s %-10s\n' tile arith range balanced as-before
for arith in fp32 fp16; do
  for tile in 4,3 6,3 8,3; do
    for range in 1e-4 3e-4 1e-3 1e-2 1 100 1000 4000 16000; do
      a=$(err --tile "$tile" --fp16-arith "$arith" --lowp-kernel portable --data-range "$range")
      b=$(err --transform "$dir/$tile.json" --fp16-arith "$arith" --lowp-kernel portable --data-range "$range")
      printf '%-6s %-5s %-8s %-10s %-10s\n' "$tile" "$arith" "$range" "$a" "$b"
    done
  done
done
