#!/usr/bin/env bash
# The full 10 000-image evaluation of the issue's grid, resume-safe, in the background-friendly way used
# on the shared development machine: 1 thread, nice 19, passive OpenMP waiting.
#   validation/full_grid.sh ARCH TILES [POINTS] [PRESETS]     e.g. validation/full_grid.sh vgg 6,4
# Appends to validation/results/full_ARCH.jsonl and skips configurations already there (--resume);
# logs start/end, wall time and load to validation/results/full_grid.log. POINTS defaults to 'grid'
# (standard, the tile's practitioners' set, seed nova, nova's catalogue); PRESETS to all seven.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 4 ]; then
  echo "usage: validation/full_grid.sh ARCH TILES [POINTS] [PRESETS]   e.g. validation/full_grid.sh vgg 6,4" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
arch="$1"; tiles="$2"; points="${3:-grid}"
presets="${4:-fp32,fp16-storage,fp16-all,bf16-storage,int8-tensor,int8-channel,int8-tap}"
py="${NOVA_VENV:-$PWD/.venv}/bin/python"
log=validation/results/full_grid.log
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1
t0=$(date +%s)
echo "$(date -u +%FT%TZ) start arch=$arch tiles=$tiles points=$points presets=$presets load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$log"
rc=0
nice -n 19 "$py" validation/evaluate.py --arch "$arch" --tiles "$tiles" --points "$points" --presets "$presets" \
    --threads 1 --backend emulation --out "validation/results/full_$arch.jsonl" --resume || rc=$?
echo "$(date -u +%FT%TZ) end   arch=$arch tiles=$tiles points=$points rc=$rc wall_s=$(( $(date +%s) - t0 )) load=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$log"
exit $rc
