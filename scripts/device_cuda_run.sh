#!/usr/bin/env bash
# One run on a lent GPU machine for the CUDA multi-pass path (first run: session 47, docs/cuda.md):
# the CUDA test program (its device test compares the GPU with the host emulation, FP32 and fp16/bf16
# tensors), the error of each default tile on the GPU beside the emulation's, then nova against PyTorch's
# cuDNN on the layer set (bench/cuda_peer.py, interleaved). The binaries come from this machine:
#
#   scripts/device_bundle.sh                                   # packs build/ into .dev/bundle.tar.xz
#   run(command="bash scripts/device_cuda_run.sh 3", carry=[".dev"], timeout_s=540)
#
# The argument is the repetitions of the peer table (3: about 4 minutes estimated, most of it the float64
# references of the first repetition on the host). Output under $OUT: gpu.log, info.log, tests_cuda.log,
# tiles.log (GPU and emulated error per tile), peer.log / peer.json.
set -u
reps=${1:-3}
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
nvidia-smi -L > "$O/gpu.log" 2>&1
lscpu | grep -E 'Model name|^CPU\(s\)' >> "$O/gpu.log"
# cuBLAS: the toolkit's or a wheel's copy where the loader's path lacks it.
. scripts/device_cublas.sh
build/nova cuda info | tee "$O/info.log"
echo "NOVA_CUBLAS=${NOVA_CUBLAS:-}" >> "$O/info.log"

timeout 120 build/tests/nova_tests_cuda > "$O/tests_cuda.log" 2>&1
echo "nova_tests_cuda exit $?" >> "$O/tests_cuda.log"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|exit" "$O/tests_cuda.log"

# Each default tile on the GPU (--check) beside the host emulation of the same passes and data.
for t in 2,3 4,3 6,3 8,3 4,5; do
  k=${t#*,}
  for mode in --check --emulate; do
    printf '%s %s: ' "$t" "$mode"
    timeout 60 build/nova cuda conv --shape 2,64,56,56,64 --kernel "$k" --tile "$t" "$mode" --io fp32 \
      | grep -E "relative L2|median" | tr '\n' ' '
    echo
  done
done > "$O/tiles.log" 2>&1
cat "$O/tiles.log"

timeout 360 python3 bench/cuda_peer.py --nova build/nova --reps "$reps" --json "$O/peer.json" \
  > "$O/peer.log" 2>&1
echo "cuda_peer exit $?" >> "$O/peer.log"
tail -36 "$O/peer.log"
echo "device_cuda_run: done; files in $O"
