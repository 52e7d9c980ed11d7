#!/bin/bash
# Device run 4 (session 18): AMX fused blocks of 32 tiles where every thread gets two or more
# (winograd_build.cpp). Every test program with it; HEAD's binary before the change (6c60be3, as
# build/nova_old) against the new one, interleaved, bf16 and int8 on NCHW16c tensors, 3 repetitions;
# issue 6's peer comparison with the new binary (bench/peer_interleaved.py, 2 repetitions).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run4_tests.log
export PYTHONUNBUFFERED=1
timeout 150 python3 bench/results/2026-11-26-session18-amx/ab_multi.py 3 before=build/nova_old,after=build/nova "bf16 16c,int8 16c" 2>&1 | tee "$O/run4_ab_blocks.log"
timeout 120 python3 bench/peer_interleaved.py --build build --reps 2 --json "$O/run4_lowp.json" > "$O/run4_lowp.log" 2>&1
tail -19 "$O/run4_lowp.log"
