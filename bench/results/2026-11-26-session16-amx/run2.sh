#!/bin/bash
# Device run 2 (session 16): the tests of the new binaries, the old binary against the new one
# (ab_binaries.py), and issue 6's and issue 5's peer comparisons with the new binary
# (bench/peer_interleaved.py). Each part writes its log under $OUT as it goes.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
D=bench/results/2026-11-26-session16-amx
run_tests run2_tests.log
export PYTHONUNBUFFERED=1
timeout 200 python3 $D/ab_binaries.py 3 "bf16 16c" "int8 16c" 2>&1 | tee "$O/run2_ab_sessions.log"
timeout 200 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run2_lowp.json" > "$O/run2_lowp.log" 2>&1
tail -20 "$O/run2_lowp.log"
timeout 120 python3 bench/peer_interleaved.py --build build --fp32 --reps 2 --json "$O/run2_fp32.json" > "$O/run2_fp32.log" 2>&1
tail -20 "$O/run2_fp32.log"
