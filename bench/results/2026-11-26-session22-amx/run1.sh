#!/bin/bash
# Device run 1 (session 22), code at 41164bd: where FP32 time goes on issue 5's three AVX-512 misses
# (1x256x14x14, 1x512x7x7, 8x512x7x7) and a neighbour, NCHW16c, 2 threads: the automatic plan, forced
# tiles, the phased and fused orders and the direct path, with stage profiles; the CPU's caches.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
{ lscpu; lscpu -C; nproc; } > "$O/run1_cpu.log" 2>&1
build/nova bench paths > "$O/run1_paths.log" 2>&1
for l in 1,256,14,14,256 1,512,7,7,512 8,512,7,7,512 8,256,14,14,256; do
  for v in "" "--tile 2,3" "--tile 4,3" "--tile 6,3" "--tile-block -1" "--algorithm direct"; do
    echo "### $l $v"
    # shellcheck disable=SC2086  # $v holds several arguments
    timeout 20 build/nova bench conv --shape "$l" --threads 2 --profile --layout nchw16c $v
  done
  echo "### $l --threads 1"
  timeout 20 build/nova bench conv --shape "$l" --threads 1 --profile --layout nchw16c
done > "$O/run1_fp32_profile.log" 2>&1
grep -E "^###|median|profile" "$O/run1_fp32_profile.log" | cut -c1-200
echo "run1: done"
