#!/bin/bash
# Device run 5 (session 18): issue 6's full low-precision table with the final code (76e8b5b) against
# ncnn (its cp312 wheel carried in .whl), PyTorch (the machine's own) and oneDNN:
# bench/peer_bench.py --lowp, 2 threads, one round. The table prints when every layer is done.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export PYTHONUNBUFFERED=1
timeout 265 python3 bench/peer_bench.py --build build --lowp --threads 2 --rounds 1 --json "$O/run5_lowp.json" > "$O/run5_lowp.log" 2>&1
echo "exit $?"
cat "$O/run5_lowp.log" | cut -c1-400
