"""Session 22: direct plans with few output pixels and many channels (the output-channel parts of the GEMM
form, the depthwise form's small pixel blocks, the NCHW planes form on both sides of its row thresholds,
at stride 1 and above):
1, 2 and 3 threads bit for bit, NCHW against NHWC bit for bit, and against PyTorch's float64 conv2d.

  .venv/bin/python fuzz_direct_threads.py SEED COUNT
"""
import sys

import numpy as np
import torch

import nova

rng = np.random.default_rng(int(sys.argv[1]))
bad = 0
for i in range(int(sys.argv[2])):
    depthwise = bool(rng.integers(0, 3) == 0)
    r = int(rng.choice([1, 3, 5])); st = int(rng.integers(1, 3)); dil = 1 if st > 1 else int(rng.integers(1, 3))
    pad = int(rng.integers(0, 3)); n = int(rng.integers(1, 3))
    if depthwise:
        g = c = int(rng.integers(2, 300)); k = c * int(rng.choice([1, 1, 2]))
        h = int(rng.integers(3, 40)); w = int(rng.integers(3, 48))
        if rng.integers(0, 3) == 0:  # wide rows: the NCHW planes form at strides above 1 (96 pixels or more)
            h = int(rng.integers(3, 12)); w = int(rng.integers(150, 330))
    else:
        g = int(rng.choice([1, 1, 2])); c = g * int(rng.integers(1, 200)); k = g * int(rng.integers(1, 300))
        h = int(rng.integers(1, 12)); w = int(rng.integers(1, 12))
    oh = (h + 2 * pad - dil * (r - 1) - 1) // st + 1; ow = (w + 2 * pad - dil * (r - 1) - 1) // st + 1
    if oh < 1 or ow < 1:
        continue
    relu = bool(rng.integers(0, 2))
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    wt = rng.uniform(-1, 1, (k, c // g, r, r)).astype(np.float32); b = rng.uniform(-1, 1, k).astype(np.float32)
    outs = {}
    for lay in ("nchw", "nhwc"):
        for threads in (1, 2, 3):
            pl = nova.ConvPlan((n, c, h, w, k), kernel=(r, r), padding=(pad, pad), stride=st, dilation=dil, groups=g,
                               weights=wt, bias=b, layout=lay, relu=relu, threads=threads, algorithm="direct")
            xin = x if lay == "nchw" else np.ascontiguousarray(x.transpose(0, 2, 3, 1))
            y = np.zeros((n, k, oh, ow) if lay == "nchw" else (n, oh, ow, k), np.float32)
            pl.execute(xin, y)
            outs[(lay, threads)] = y if lay == "nchw" else y.transpose(0, 3, 1, 2)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(),
                                     torch.from_numpy(b).double(), stride=st, padding=pad, dilation=dil, groups=g)
    if relu:
        ref = torch.relu(ref)
    ref = ref.numpy()
    base = outs[("nhwc", 1)]
    err = np.linalg.norm(base - ref) / max(np.linalg.norm(ref), 1e-30)
    same = all(np.array_equal(v, base) for v in outs.values())
    if not same or err > 1e-5:
        bad += 1
        print("FAIL", dict(n=n, c=c, k=k, h=h, w=w, r=r, g=g, st=st, dil=dil, pad=pad), err, same)
print("cases", sys.argv[2], "bad", bad)
