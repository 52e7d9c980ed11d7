#!/usr/bin/env bash
# Session 28, device run 3 on the AMX Xeon: 5a87a98 (direct GEMM pixel blocks of nearly one size, a
# multiple of the threads where few; balanced_pixel_block) against e6d5517 (build/nova_e6d): every test
# program, then the 1x1 layers of ResNeXt-50 whose blocks change (and two whose blocks do not), 6
# alternated repetitions, with the direct stage's idle share from --profile.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
run_tests run3_tests.log
layers=("nhwc 1,1024,14,14,512 1 1 0 1" "nchw16c 1,1024,14,14,512 1 1 0 1" "nhwc 1,512,14,14,1024 1 1 0 1"
        "nhwc 1,1024,14,14,1024 1 1 0 1" "nhwc 1,512,28,28,1024 1 2 0 1" "nhwc 1,1024,14,14,2048 1 2 0 1"
        "nhwc 1,256,28,28,512 1 1 0 1" "nhwc 1,1024,7,7,2048 1 1 0 1" "nhwc 1,2048,7,7,1024 1 1 0 1")
for l in "${layers[@]}"; do
  read -r lay shape k s p g <<< "$l"
  for b in nova_e6d nova; do
    printf '%s %s %s k%s s%s: ' "$b" "$lay" "$shape" "$k" "$s"
    build/$b bench conv --shape "$shape" --kernel "$k" --stride "$s" --pad "$p" --groups "$g" --layout "$lay" \
      --threads 2 --profile | tail -1 | sed 's/.*thread ms per execute: //'
  done
done > "$O/run3_idle.log" 2>&1
timeout 240 python3 bench/results/2026-11-27-session28-amx/ab_multi.py 6 build/nova_e6d,build/nova "${layers[@]}" \
  > "$O/run3_ab_pixel_blocks.log" 2>&1
cat "$O/run3_idle.log" "$O/run3_ab_pixel_blocks.log"
