#!/bin/bash
# Device run 5 (session 22): issue 5's interleaved FP32 table (5 repetitions) with the final code
# (4ecdcea: the GEMMs prefetch U's next panel one line per reduction step).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
timeout 230 python3 bench/peer_interleaved.py --fp32 --build build --reps 5 --json "$O/run5_fp32.json" > "$O/run5_fp32.log" 2>&1
tail -19 "$O/run5_fp32.log"
echo "run5: done"
