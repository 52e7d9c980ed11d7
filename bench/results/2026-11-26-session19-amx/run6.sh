#!/bin/bash
# Device run 6 (session 19): int8-spatial reading its int8 codes in place. Every test program;
# c0c2ce5 (build/nova_old) against the change, int8-spatial with int8 tensors in NCHW16c, calibrated,
# 2 repetitions.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run6_tests.log
export PYTHONUNBUFFERED=1
timeout 120 python3 bench/results/2026-11-26-session18-amx/ab_multi.py 2 head=build/nova_old,new=build/nova "int8-spatial 16c" 2>&1 | tee "$O/run6_ab_spatial.log"
