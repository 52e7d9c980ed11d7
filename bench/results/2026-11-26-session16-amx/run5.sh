#!/bin/bash
# Device run 5 (session 16): issue 6's full low-precision table with ncnn (its cp312 wheel carried in
# .whl) and PyTorch (the machine's own), bench/peer_bench.py --lowp, 2 threads, one round.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export PYTHONUNBUFFERED=1
timeout 230 python3 bench/peer_bench.py --build build --lowp --threads 2 --rounds 1 --json "$O/run5_lowp.json" 2>&1 | tee "$O/run5_lowp.log"
