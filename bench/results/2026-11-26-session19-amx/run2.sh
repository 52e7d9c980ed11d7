#!/bin/bash
# Device run 2 (session 19): run 1 had the typed in-place reads faster on every batch-1 layer but slower
# on 1x64x224x224 (bf16 1.35, int8 1.02) and mixed on batch 8; those layers again, 4 repetitions, the
# same two binaries (abfd8d5 as build/nova_old, 6eff5a9 as build/nova), and fp16 on two batch-1 layers.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
A=bench/results/2026-11-26-session18-amx/ab_multi.py
timeout 200 python3 $A 4 before=build/nova_old,after=build/nova "int8 16c,bf16 16c" 8,64,56,56,64 8,128,28,28,128 8,256,14,14,256 1,64,224,224,64 2>&1 | tee "$O/run2_ab_typed.log"
timeout 60 python3 $A 4 before=build/nova_old,after=build/nova "fp16 16c" 1,64,56,56,64 1,128,28,28,128 8,64,56,56,64 2>&1 | tee -a "$O/run2_ab_typed.log"
