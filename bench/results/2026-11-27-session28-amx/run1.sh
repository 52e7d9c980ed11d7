#!/usr/bin/env bash
# Session 28, device run 1 on the AMX Xeon: e6d5517 (sessions 26-27's direct path: NCHW first layers
# without packing, NHWC short kernel rows in order, grouped convolutions in lanes) on AVX-512 for the first
# time. Every test program; the kernel each precision runs; the direct path's layers against 7618f23
# (session 25's last code, build/nova_s25), 3 alternated repetitions; issue 5's and 6's interleaved peer
# tables (oneDNN), 3 repetitions.
#   scripts/device_bundle.sh; run(command="bash bench/results/2026-11-27-session28-amx/run1.sh", carry=[".dev"])
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
S=bench/results/2026-11-27-session28-amx
start=$SECONDS
lscpu | grep -E 'Model name|^CPU\(s\)|Flags|L2|L3' | cut -c1-400 > "$O/run1_cpu.log"
run_tests run1_tests.log
echo "tests: $((SECONDS - start)) s"
build/nova bench paths > "$O/run1_paths.log" 2>&1
g() { for l in "1,128,56,56,128 3 1 1 32" "8,128,56,56,128 3 1 1 32" "1,256,56,56,256 3 2 1 32" \
               "1,256,28,28,256 3 1 1 32" "1,512,14,14,512 3 1 1 32" "1,64,56,56,64 3 1 1 16" \
               "1,64,112,112,64 3 2 1 32"; do echo "$1 $l"; done; }
f() { for l in "1,3,224,224,64 7 2 3 1" "1,3,224,224,64 3 1 1 1" "1,3,224,224,32 3 2 1 1" \
               "8,3,32,32,64 3 1 1 1" "8,1,28,28,32 5 1 2 1"; do echo "$1 $l"; done; }
mapfile -t layers < <(g nhwc; g nchw16c; f nhwc; f nchw)
timeout 200 python3 bench/results/2026-11-27-session26-avx2/ab_binaries_layers.py 3 build/nova_s25 build/nova \
  "${layers[@]}" > "$O/run1_ab_direct.log" 2>&1
echo "direct a/b: $((SECONDS - start)) s"
timeout 150 python3 bench/peer_interleaved.py --fp32 --build build --reps 3 --json "$O/run1_fp32.json" \
  > "$O/run1_fp32.log" 2>&1
echo "fp32 table: $((SECONDS - start)) s"
timeout 150 python3 bench/peer_interleaved.py --build build --reps 3 --json "$O/run1_lowp.json" \
  > "$O/run1_lowp.log" 2>&1
echo "lowp table: $((SECONDS - start)) s"
tail -3 "$O/run1_ab_direct.log"; tail -4 "$O/run1_fp32.log"
