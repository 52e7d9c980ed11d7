#!/bin/bash
# Device run 5 (session 19): FP32 NCHW tensors read in place (transposing bands). Every test program;
# c0c2ce5 (the copy, build/nova_old) against the change, interleaved, FP32 NCHW, 3 repetitions.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run5_tests.log
export PYTHONUNBUFFERED=1
timeout 200 python3 bench/results/2026-11-26-session18-amx/ab_multi.py 3 copy=build/nova_old,in_place=build/nova "fp32" 2>&1 | tee "$O/run5_ab_nchw.log"
