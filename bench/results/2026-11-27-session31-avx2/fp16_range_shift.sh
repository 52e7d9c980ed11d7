#!/usr/bin/env bash
# fp16 Winograd's relative L2 error (against float64) on activations past fp16's comfortable range, before
# the per-call V shift (OLD_NOVA) and after it (NEW_NOVA), with the default (balanced) transform and with
# the same transform passed as given (unbalanced rows, whose V leaves fp16's range at smaller inputs).
# Layer 1x64x28x28->64, weights uniform in +-0.1, input and bias uniform in +-R; portable kernel, one
# thread; the shift the new binary applied in the last column.
# Usage: fp16_range_shift.sh OLD_NOVA NEW_NOVA
set -euo pipefail
old=$1 new=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$new" transform --tile 4,3 --points "0, 5/8, -5/8, 14/9, -14/9, inf" \
  --scaling "d1=1,1,1,52488/515431,52488/515431,1;d2=1,1,1,1,1,1" --format json -o "$dir/4,3.json"
"$new" transform --tile 6,3 --points "0, 1/2, -1/2, 1, -1, 2, -2, inf" --scaling lagrange --format json \
  -o "$dir/6,3.json"
"$new" transform --tile 8,3 --points "0, 3/7, -3/7, 4/5, -4/5, 5/4, -5/4, 19/8, -19/8, inf" \
  --scaling "d1=1,1,1,1,1,1,-6422528/104110029,1468006400/1842977741139,1,1;d2=1,1,1,1,1,1,1,1,1468006400/1842977741139,1" \
  --format json -o "$dir/8,3.json"
run() { "$@" --shape 1,64,28,28,64 --dtype fp16 --threads 1 --repeat 1 --check --format json |
  python3 -c '
import json, sys
d = json.load(sys.stdin); e = d["rel_l2_error"]
print(("non-finite" if e is None or e != e or e == float("inf") else "%.3g" % e) + ("" if "stats" not in d else "/%d" % d["stats"]["v_shift"]))'; }
printf '%-6s %-5s %-8s %-12s %-12s %-12s %-12s\n' tile arith range before now given-before given-now
for arith in fp32 fp16; do
  for tile in 4,3 6,3 8,3; do
    for range in 1 400 4000 16000 1e5 1e6 1e20; do
      common=(--fp16-arith "$arith" --lowp-kernel portable --data-range "$range")
      a=$(run "$old" bench conv --tile "$tile" "${common[@]}")
      b=$(run "$new" bench conv --tile "$tile" "${common[@]}")
      c=$(run "$old" bench conv --transform "$dir/$tile.json" "${common[@]}")
      d=$(run "$new" bench conv --transform "$dir/$tile.json" "${common[@]}")
      printf '%-6s %-5s %-8s %-12s %-12s %-12s %-12s\n' "$tile" "$arith" "$range" "$a" "$b" "$c" "$d"
    done
  done
done
