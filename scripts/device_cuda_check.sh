#!/usr/bin/env bash
# A second run on a lent GPU machine, after scripts/device_cuda_run.sh: the CUDA test program's device test
# under compute-sanitizer (memcheck, racecheck, initcheck, synccheck), the GPU against the emulation on
# tiles and tensor types the first run did not time (F(7,3), whose kernels loop at run time, F(2,5),
# 5x5, fp16/bf16 tensors, inputs of 1e-6 and 1e4), and the time of each pass (Nsight Compute's
# gpu__time_duration per kernel) on two layers of the peer table where nova trails cuDNN's fp16.
#
#   scripts/device_bundle.sh
#   run(command="bash scripts/device_cuda_check.sh [peer|tiles]", carry=[".dev"], timeout_s=300)
#
# peer: also bench/cuda_peer.py with 2 repetitions (about a minute more); tiles: also every 3x3 default tile
# on the peer table's layers (GPU median and error; 52 runs, the float64 references on the host).
#
# Output under $OUT: sanitizer.log, tiles2.log, ncu_*.csv.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
. scripts/device_cublas.sh
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck initcheck synccheck; do
  echo "### $tool"
  timeout 100 "$cs" --tool "$tool" --print-limit 4 --error-exitcode 9 \
    build/tests/nova_tests_cuda --gtest_filter='CudaMultipass.DevicePlanRunsTheEmulatedPasses' --gtest_brief=1 \
    > "/tmp/$tool.log" 2>&1
  echo "exit $?"
  grep -v '^Running main\|^Note: Google' "/tmp/$tool.log" | head -60
done > "$O/sanitizer.log" 2>&1
cat "$O/sanitizer.log"

for c in "1,32,29,31,40 --tile 7,3" "1,32,29,31,40 --tile 2,5 --kernel 5" \
         "2,64,56,56,64 --tile 4,5 --kernel 5" "2,64,56,56,64 --io fp16" "2,64,56,56,64 --io bf16" \
         "2,64,56,56,64 --data-range 1e-6" "2,64,56,56,64 --data-range 1e4 --relu" "3,17,9,13,5 --tile 6,3 --pad 0"; do
  for mode in --check --emulate; do
    printf '%s %s: ' "$c" "$mode"
    # shellcheck disable=SC2086  # $c holds several arguments
    timeout 60 build/nova cuda conv --shape $c $mode | grep -E "relative L2|median|scaled|NaN|Inf" | tr '\n' ' '
    echo
  done
done > "$O/tiles2.log" 2>&1
cat "$O/tiles2.log"

ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for l in 8,64,56,56,64 32,128,28,28,128; do
  timeout 60 "$ncu" --clock-control none --launch-skip 12 --launch-count 12 --csv \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed \
    build/nova cuda conv --shape "$l" --repeat 5 > "$O/ncu_${l//,/x}.csv" 2>&1
  echo "== $l (ncu exit $?)"
  grep -E '"gpu__time_duration.sum"' "$O/ncu_${l//,/x}.csv" | awk -F'","' '{print $5, $(NF)}' | head -12
done
if [ "${1:-}" = peer ]; then
  timeout 200 python3 bench/cuda_peer.py --nova build/nova --reps 2 --json "$O/peer.json" > "$O/peer.log" 2>&1
  echo "cuda_peer exit $?" >> "$O/peer.log"
  tail -36 "$O/peer.log"
fi
# tiles: every 3x3 default tile on the peer table's layers, GPU time and error (is F(4,3), 3-4x more accurate
# than F(6,3) in fp16 storage, the better default on a GPU? docs/cuda.md, "Left").
if [ "${1:-}" = tiles ]; then
  for l in 1,64,56,56,64 1,128,28,28,128 1,256,14,14,256 1,512,7,7,512 8,64,56,56,64 8,128,28,28,128 \
           8,256,14,14,256 8,512,7,7,512 1,64,224,224,64 32,64,56,56,64 32,128,28,28,128 32,256,14,14,256 \
           32,512,7,7,512; do
    for t in 2,3 4,3 6,3 7,3; do
      printf '%s F(%s): ' "$l" "$t"
      timeout 60 build/nova cuda conv --shape "$l" --tile "$t" --check --repeat 50 |
        grep -E "relative L2|median" | sed 's/ *relative L2 error vs float64 reference:/ error/' | tr '\n' ' '
      echo
    done
  done > "$O/tiles_sweep.log" 2>&1
  cat "$O/tiles_sweep.log"
fi
echo "device_cuda_check: done"
