#!/usr/bin/env bash
# One run on a lent device machine for issues 5 and 6 (its host CPU has been the AMX Xeon so far): every
# test program, the kernel each precision runs, issue 6's and issue 5's interleaved peer tables, and stage
# profiles of the bf16 and int8 plans on the layer set. The binaries come from this machine:
#
#   scripts/device_bundle.sh                       # packs build/ into .dev/bundle.tar.xz (git-ignored)
#   run(command="bash scripts/device_issue_run.sh 3", carry=[".dev"], timeout_s=560)
#
# The argument is the repetitions of each interleaved table (3 fit one call: session 19's run 4 took
# about 7 minutes with the tests; session 22's run 2, the same work on a quieter host, 2 minutes, and a
# machine started in about 30 s). int8 profiles need more than 10 s each (calibration and plan).
# Output under $OUT: tests.log, paths.log, lowp.log/.json (nova bf16 and int8 against oneDNN's AMX bf16
# direct, int8 Winograd and AMX int8 direct), fp32.log/.json (nova FP32
# against oneDNN's FP32 direct and Winograd), profile.log (`nova bench conv --profile`, NCHW16c), tiles.log
# (forced tiles on the layers short of the targets), blocking.log (fused blocks against phased, FP32 8x128x28x28).
# ncnn and PyTorch are not on the device (no PyPI there), so their columns stay on the development runs.
set -u
reps=${1:-3}
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | cut -c1-300 > "$O/cpu.log"
run_tests tests.log
build/nova bench paths > "$O/paths.log" 2>&1
timeout 240 python3 bench/peer_interleaved.py --build build --reps "$reps" --json "$O/lowp.json" > "$O/lowp.log" 2>&1
tail -19 "$O/lowp.log"
timeout 200 python3 bench/peer_interleaved.py --fp32 --build build --reps "$reps" --json "$O/fp32.json" \
  > "$O/fp32.log" 2>&1
tail -19 "$O/fp32.log"
for l in 1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 \
         8,256,14,14,256 8,512,7,7,512 1,64,224,224,64; do
  for v in "int8 --calibrate --input-type int8" "bf16 --io bf16" "fp32"; do
    echo "### $l $v"
    # shellcheck disable=SC2086  # $v holds several arguments
    timeout 20 build/nova bench conv --shape "$l" --threads 2 --profile --layout nchw16c --dtype $v
  done
done > "$O/profile.log" 2>&1
# Forced tiles on the layers short of the issues' targets in session 22 (FP32 on AVX-512: are the
# automatic tiles still the fastest with U prefetched? bf16 on AMX: does F(6,3)'s smaller transform work
# per output pay on the transform-bound 64-channel layers?), 3 alternated repetitions each.
for _ in 1 2 3; do
  for l in 1,256,14,14,256 1,512,7,7,512 8,512,7,7,512; do
    for t in auto 2,3 4,3 6,3; do
      tile=(); [ "$t" = auto ] || tile=(--tile "$t")
      printf '%s fp32 %s: ' "$l" "$t"
      timeout 20 build/nova bench conv --shape "$l" --threads 2 --layout nchw16c "${tile[@]}" | tail -1
    done
  done
  for l in 8,64,56,56,64 1,64,224,224,64; do
    for t in auto 4,3 6,3; do
      tile=(); [ "$t" = auto ] || tile=(--tile "$t")
      printf '%s bf16 %s: ' "$l" "$t"
      timeout 20 build/nova bench conv --shape "$l" --threads 2 --layout nchw16c --dtype bf16 --io bf16 \
        "${tile[@]}" | tail -1
    done
  done
done > "$O/tiles.log" 2>&1
# FP32 8x128x28x28 on AVX-512: phased (the AVX-512 rule's choice there, phased_vm_passes = 4) against fused
# blocks. On AVX2 fused blocks of 11 took 0.84-0.89 of the phased time (session 37, which set that
# rule's passes to 6 for AVX2 plans only); the Xeon had this layer at 1.22 (NCHW) / 1.36 (NCHW16c) of the
# best peer in session 25. 3 alternated repetitions of auto, phased and blocks of 8, 12 and 16 tiles.
for _ in 1 2 3; do
  for layout in nchw nchw16c; do
    for b in 0 -1 8 12 16; do
      printf '8,128,28,28,128 fp32 %s tile-block %s: ' "$layout" "$b"
      timeout 20 build/nova bench conv --shape 8,128,28,28,128 --threads 2 --layout "$layout" --tile-block "$b" \
        | tail -1
    done
  done
done > "$O/blocking.log" 2>&1
echo "device_issue_run: done; files in $O"
