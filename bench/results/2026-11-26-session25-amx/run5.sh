#!/bin/bash
# Device run 5 (session 25): does the AVX-512 FP32 micro-kernel's shape limit the short-row GEMMs of the
# batch-1 layers? Run 4 had 1x256x14x14 F(4,3)'s GEMM stage at about 0.9 of the 6x64 kernel's in-L2 speed
# at 24 rows (46 of 64 flop/cycle), so the U stream is not its bound. Two variant builds of 11d5336 with a
# different AVX-512 FP32 table (experiments, not committed): nova_nv2 (6 rows x 32 columns: a 256-channel
# panel of U is 32 KB, inside L1) and nova_m8n3 (8 x 48: 16 rows in two groups, not 6 + 6 + 4), against
# build/nova (6 x 64), 4 alternated repetitions, NCHW16c, 2 threads; each variant's error checked once.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
for b in nova nova_nv2 nova_m8n3; do
  for l in 1,256,14,14,256 1,512,7,7,512; do
    printf '%s %s: ' "$b" "$l"
    timeout 30 build/$b bench conv --shape $l --threads 2 --layout nchw16c --check --repeat 5 | grep -o "winograd F([0-9],3)\|relative L2[^;]*" | tr '\n' ' '
    echo
  done
done > "$O/run5_check.log" 2>&1
for rep in 1 2 3 4; do
  case $rep in 1) order="nova nova_nv2 nova_m8n3";; 2) order="nova_m8n3 nova_nv2 nova";;
               3) order="nova_nv2 nova_m8n3 nova";; 4) order="nova nova_m8n3 nova_nv2";; esac
  for l in 1,256,14,14,256 1,512,7,7,512 1,128,28,28,128 1,64,56,56,64 8,64,56,56,64 8,512,7,7,512; do
    for b in $order; do
      printf '%s %s %s: ' "$rep" "$l" "$b"
      timeout 30 build/$b bench conv --shape $l --threads 2 --layout nchw16c | tail -1
    done
  done
done > "$O/run5_ab_kernel_shape.log" 2>&1
echo "run5: done"
