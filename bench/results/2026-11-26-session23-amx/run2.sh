#!/bin/bash
# Device run 2 (session 23), code at 3e3532a (the depthwise runs form): every test program (the new
# depthwise kernel's first run on AVX-512), the depthwise A/B against 301c9da (build/nova_old), and the
# FP32 and low-precision peer tables again (3 repetitions).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
run_tests run2_tests.log
timeout 150 python3 bench/results/2026-11-26-session23-avx2/ab_depthwise_layouts.py 2 build/nova_old build/nova \
  1,1024,7,7,1024 1,512,14,14,512 1,128,56,56,128 8,256,14,14,256 1,32,112,112,32 > "$O/run2_ab_depthwise.log" 2>&1
cat "$O/run2_ab_depthwise.log"
timeout 150 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run2_fp32.json" > "$O/run2_fp32.log" 2>&1
tail -19 "$O/run2_fp32.log"
timeout 150 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run2_lowp.json" > "$O/run2_lowp.log" 2>&1
tail -19 "$O/run2_lowp.log"
echo "run2: done"
