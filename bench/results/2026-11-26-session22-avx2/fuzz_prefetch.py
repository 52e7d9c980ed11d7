"""Session 22: FP32 Winograd plans whose transformed filters exceed the L2 budget (the GEMMs prefetch U's
next panel): random deep shapes (96-300 channels, 5-30 pixels a side, batch 1-3, padding 0-2, tiles
F(2,3) to F(7,3) and the automatic choice, NCHW and NHWC), 1, 2 and 3 threads bit for bit and NCHW against
NHWC bit for bit wherever the plans run the same tile (the automatic choice depends on the thread count),
and against PyTorch's float64 conv2d (relative L2 under the Winograd tests' bound for the tile's size).

  .venv/bin/python fuzz_prefetch.py SEED COUNT
"""
import re
import sys

import numpy as np
import torch

import nova

BOUND = {"2,3": 2e-6, "4,3": 2e-6, "6,3": 1e-5, "7,3": 4e-5, "": 4e-5}
rng = np.random.default_rng(int(sys.argv[1]))
bad = prefetched = 0
for i in range(int(sys.argv[2])):
    n = int(rng.integers(1, 4)); c = int(rng.integers(96, 301)); k = int(rng.integers(96, 301))
    h = int(rng.integers(5, 31)); w = int(rng.integers(5, 31)); pad = int(rng.integers(0, 3))
    if h + 2 * pad < 3 or w + 2 * pad < 3:
        continue
    tile = str(rng.choice(["2,3", "4,3", "6,3", "7,3", ""]))
    relu = bool(rng.integers(0, 2))
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    wt = rng.uniform(-1, 1, (k, c, 3, 3)).astype(np.float32); b = rng.uniform(-1, 1, k).astype(np.float32)
    oh, ow = h + 2 * pad - 2, w + 2 * pad - 2
    outs, tiles = {}, {}
    for lay in ("nchw", "nhwc"):
        for threads in (1, 2, 3):
            pl = nova.ConvPlan((n, c, h, w, k), padding=(pad, pad), weights=wt, bias=b, layout=lay, relu=relu,
                               threads=threads, tile=tile, algorithm="winograd")
            if lay == "nchw" and threads == 1 and "prefetched" in repr(pl):
                prefetched += 1
            tiles[(lay, threads)] = re.search(r"F\(\d,\d\)", repr(pl)).group(0)
            xin = x if lay == "nchw" else np.ascontiguousarray(x.transpose(0, 2, 3, 1))
            y = np.zeros((n, k, oh, ow) if lay == "nchw" else (n, oh, ow, k), np.float32)
            pl.execute(xin, y)
            outs[(lay, threads)] = y if lay == "nchw" else y.transpose(0, 3, 1, 2)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(),
                                     torch.from_numpy(b).double(), padding=pad)
    if relu:
        ref = torch.relu(ref)
    ref = ref.numpy()
    base = outs[("nchw", 1)]
    err = np.linalg.norm(base - ref) / max(np.linalg.norm(ref), 1e-30)
    same = all(np.array_equal(v, base) for key, v in outs.items() if tiles[key] == tiles[("nchw", 1)])
    if not same or err > BOUND[tile]:
        bad += 1
        print("FAIL", dict(n=n, c=c, k=k, h=h, w=w, pad=pad, tile=tile), err, same, flush=True)
print("cases", sys.argv[2], "prefetching plans", prefetched, "bad", bad)
