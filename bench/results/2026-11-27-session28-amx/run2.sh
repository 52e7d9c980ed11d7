#!/usr/bin/env bash
# Session 28, device run 2 on the AMX Xeon: run 1 found the NHWC stem (1x3x224x224->64 7x7 s2) 1.24x
# (1.15-1.43) slower at e6d5517 than at 7618f23 on AVX-512, where the AVX2 machine has them level. Four
# binaries alternated, 6 repetitions: 7618f23 (nova_s25), 7d04eae (nova_s26, before 45169b6's NHWC
# in-order rows and fused epilogue), e6d5517 (nova), and e6d5517 with the bias and ReLU as a pass of their
# own after the segments GEMM (nova_nofuse, not committed); the plans' descriptions and stage profiles.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
S=bench/results/2026-11-27-session28-amx
for b in nova_s25 nova_s26 nova nova_nofuse; do
  echo "## $b"; build/$b bench conv --shape 1,3,224,224,64 --kernel 7 --stride 2 --pad 3 --layout nhwc --threads 2 --profile
done > "$O/run2_describe.log" 2>&1
timeout 300 python3 $S/ab_multi.py 6 build/nova_s25,build/nova_s26,build/nova,build/nova_nofuse \
  "nhwc 1,3,224,224,64 7 2 3 1" "nhwc 1,3,224,224,64 3 1 1 1" "nhwc 1,3,224,224,32 3 2 1 1" \
  "nhwc 8,3,32,32,64 3 1 1 1" "nhwc 1,64,56,56,64 3 2 1 1" > "$O/run2_ab_stem.log" 2>&1
cat "$O/run2_ab_stem.log"
