#!/bin/bash
# Device run 3 (session 19): fused blocks split into output-channel parts where whole blocks leave a
# thread idle. Every test program; which plans split (describe lines); 6eff5a9 (typed in-place reads
# only, build/nova_typed) against HEAD (both changes) on the layers whose AMX blocks are 16+16 | 16+1,
# 4 repetitions; issue 6's and issue 5's peer tables with HEAD.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run3_tests.log
export PYTHONUNBUFFERED=1
for l in 1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 8,256,14,14,256 8,512,7,7,512 1,64,224,224,64; do
  for v in "fp32" "int8 --calibrate --input-type int8" "bf16 --io bf16"; do
    build/nova bench conv --shape $l --threads 2 --layout nchw16c --repeat 1 --dtype $v 2>&1 | head -1 | cut -c1-140
  done
done > "$O/run3_plans.log"
grep -c "output-channel parts" "$O/run3_plans.log"; grep "output-channel parts" "$O/run3_plans.log"
A=bench/results/2026-11-26-session18-amx/ab_multi.py
timeout 120 python3 $A 4 typed=build/nova_typed,split=build/nova "int8 16c,bf16 16c,fp32 16c" 1,256,14,14,256 1,128,28,28,128 2>&1 | tee "$O/run3_ab_split.log"
timeout 150 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run3_lowp.json" > "$O/run3_lowp.log" 2>&1
tail -19 "$O/run3_lowp.log"
timeout 150 python3 bench/peer_interleaved.py --fp32 --build build --reps 2 --json "$O/run3_fp32.json" > "$O/run3_fp32.log" 2>&1
tail -19 "$O/run3_fp32.log"
