#!/bin/bash
# Device run 2 (session 18): run 1's A/B had HEAD's FP32 on 1x64x224x224 NCHW16c at 1.24x session 16's
# time while bench/peer_interleaved.py, in the same run, had HEAD at session 16's figure. Three binaries
# interleaved: session 16's (s16), HEAD's (head) and HEAD's without huge pages (nohuge: AlignedBuffer's
# kHugeFrom set past any size), FP32 on both layouts, 4 repetitions, on the layers with the largest buffers.
set -u
. bench/results/2026-11-26-session16-amx/device_setup.sh
export PYTHONUNBUFFERED=1
grep -m1 -o "AnonHugePages.*" /proc/meminfo
timeout 200 python3 bench/results/2026-11-26-session18-amx/ab_multi.py 4 s16=build/nova_old,head=build/nova,nohuge=build/nova_nohuge "fp32 16c,fp32" 1,64,224,224,64 8,512,7,7,512 8,128,28,28,128 8,64,56,56,64 2>&1 | tee "$O/run2_ab_huge.log"
