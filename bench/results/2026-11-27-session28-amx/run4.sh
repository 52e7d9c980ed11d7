#!/usr/bin/env bash
# Session 28, device run 4 on the AMX Xeon: e7cdd44 (1x1 stride-1 layers' direct GEMM reads the pixels in
# place, DirectPlan::pixels_in_place) against 5a87a98 (build/nova_5a8): every test program, then
# ResNeXt-50's 1x1 layers (a stride-2 one as a control), 6 alternated repetitions.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
run_tests run4_tests.log
timeout 240 python3 bench/results/2026-11-27-session28-amx/ab_multi.py 6 build/nova_5a8,build/nova \
  "nhwc 1,64,56,56,128 1 1 0 1" "nhwc 1,256,56,56,128 1 1 0 1" "nhwc 1,512,28,28,256 1 1 0 1" \
  "nhwc 1,1024,14,14,512 1 1 0 1" "nhwc 1,2048,7,7,1024 1 1 0 1" "nchw 1,512,28,28,256 1 1 0 1" \
  "nchw16c 1,256,56,56,128 1 1 0 1" "nhwc 1,256,56,56,512 1 2 0 1" > "$O/run4_ab_pixels_in_place.log" 2>&1
cat "$O/run4_ab_pixels_in_place.log"
