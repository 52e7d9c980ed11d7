#!/bin/bash
# Device run 4 (session 19): the final code (the typed in-place reads of 6eff5a9; the output-channel
# parts reverted). Issue 6's and issue 5's peer tables, 3 repetitions each, and stage profiles of the
# bf16 and int8 plans on NCHW16c tensors.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
build/nova bench paths 2>&1 | head -12 > "$O/run4_paths.log"
timeout 200 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run4_lowp.json" > "$O/run4_lowp.log" 2>&1
tail -19 "$O/run4_lowp.log"
timeout 200 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run4_fp32.json" > "$O/run4_fp32.log" 2>&1
tail -19 "$O/run4_fp32.log"
for l in 1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 8,256,14,14,256 8,512,7,7,512 1,64,224,224,64; do
  for v in "int8 --calibrate --input-type int8" "bf16 --io bf16"; do
    echo "### $l $v"; timeout 20 build/nova bench conv --shape $l --threads 2 --profile --layout nchw16c --dtype $v
  done
done > "$O/run4_profile.log" 2>&1
