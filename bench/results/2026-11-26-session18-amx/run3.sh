#!/bin/bash
# Device run 3 (session 18): the GEMM kernels alone (nova_bench_gemm: the AVX-512 FP32 micro-kernel, the
# AMX int8 and bf16 kernels in a tile session), then the fused order's block of tiles for bf16 and int8
# on NCHW16c tensors (sweep_blocks.py, 2 repetitions), HEAD's binary.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
timeout 60 build/bench/nova_bench_gemm --benchmark_filter='BM_GemmKernel/isa:2/|BM_LowpGemm/kind:(2|5)/' --benchmark_min_time=0.1 2>&1 | tee "$O/run3_gemm.log" | grep -v "^-\|^Bench"
timeout 200 python3 bench/results/2026-11-26-session18-amx/sweep_blocks.py 2 2>&1 | tee "$O/run3_blocks.log"
