#!/bin/bash
# Device run 4 (session 25): 30abad9 (the blocking rules as one pure function) on the AMX Xeon: every test
# program; then what a GEMM of the batch-1 FP32 misses costs with U in L2 (nova_bench_gemm, the AVX-512
# 6x64 kernel at C = K = 256 and 512, rows 24: the engine's rate without U streamed from L3) beside the
# same layers' GEMM stage in a plan (`nova bench conv --profile`, NCHW16c, 3 times each).
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
run_tests run4_tests.log
timeout 60 build/bench/nova_bench_gemm --benchmark_filter='BM_GemmKernel/isa:2/C:(256|512)/K:(256|512)/rows:(24|128)' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > "$O/run4_gemm_l2.log" 2>&1
for rep in 1 2 3; do
  for l in "1,256,14,14,256 --tile 4,3" "1,256,14,14,256 --tile 2,3" "1,512,7,7,512 --tile 2,3" "1,128,28,28,128 --tile 4,3"; do
    echo "### $rep $l"
    # shellcheck disable=SC2086
    timeout 30 build/nova bench conv --shape $l --threads 2 --layout nchw16c --profile | tail -2
  done
done > "$O/run4_fp32_profile.log" 2>&1
echo "run4: done"
