#!/bin/bash
# Device run 4 (session 16): FP32 tiles and orders on AVX-512 against oneDNN (sweep_fp32.py).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
timeout 200 python3 bench/results/2026-11-26-session16-amx/sweep_fp32.py 3 2>&1 | tee "$O/run4_sweep_fp32.log"
