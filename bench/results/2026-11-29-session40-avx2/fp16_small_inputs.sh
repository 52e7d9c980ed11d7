#!/usr/bin/env bash
# fp16 plans on FP32 tensors far below unit scale: relative L2 error against the float64 reference and
# the V shift, before (BEFORE: a nova binary of the parent commit) and after (AFTER) the upward shift.
# Layer and data of session 30's table (docs/engine.md, "fp16: V's exponent range"): 1x64x28x28->64,
# input and bias uniform in +-R, weights +-0.1, 2 threads. Usage: fp16_small_inputs.sh BEFORE AFTER
set -euo pipefail
before=$1 after=$2
printf "%-8s %-6s %-5s %-6s %-22s %-22s\n" layout tile arith R "before: error / shift" "after: error / shift"
for layout in nchw nhwc; do
  for tile in 4,3 6,3 8,3; do
    for arith in fp32 fp16; do
      for R in 1 1e-3 1e-4 1e-5 1e-6 1e-8 1e-20; do
        row=()
        for bin in "$before" "$after"; do
          j=$("$bin" bench conv --shape 1,64,28,28,64 --dtype fp16 --tile "$tile" --fp16-arith "$arith" \
                --layout "$layout" --check --data-range "$R" --threads 2 --repeat 3 --format json)
          row+=("$(python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.3e / %d" % (j["rel_l2_error"], j["stats"]["v_shift"]))' <<<"$j")")
        done
        printf "%-8s %-6s %-5s %-6s %-22s %-22s\n" "$layout" "$tile" "$arith" "$R" "${row[0]}" "${row[1]}"
      done
    done
  done
done
