"""Session 23: the depthwise form on NHWC and NCHW16c tensors (runs of output pixels, bias and ReLU fused,
read in place): random depthwise layers (channel multiplier 1 and 2, kernels 1x1 to 7x7 and non-square,
stride 1-3, dilation 1-2, padding 0-3, batch 1-2, channel counts not multiples of 16), each in NCHW, NHWC
and NCHW16c and on 1, 2 and 3 threads: every output bit for bit the same, within 1e-5 of PyTorch's float64
conv2d, and NCHW16c's padding lanes +0 with NaN in the input's padding lanes.

  .venv/bin/python fuzz_depthwise_runs.py SEED COUNT
"""
import sys

import numpy as np
import torch

import nova

rng = np.random.default_rng(int(sys.argv[1]))
bad = checked = 0


def to16c(a):  # NCHW -> nChw16c, padding lanes NaN
    n, c, h, w = a.shape
    cb = -(-c // 16)
    out = np.full((n, cb * 16, h, w), np.nan, np.float32)
    out[:, :c] = a
    return np.ascontiguousarray(out.reshape(n, cb, 16, h, w).transpose(0, 1, 3, 4, 2))


for i in range(int(sys.argv[2])):
    r = int(rng.choice([1, 3, 3, 5, 7])); s = r if rng.integers(0, 4) else int(rng.choice([1, 3, 5]))
    st = int(rng.integers(1, 4)); dil = int(rng.integers(1, 3)); pad = int(rng.integers(0, 4))
    n = int(rng.integers(1, 3)); g = c = int(rng.integers(1, 140)); k = c * int(rng.choice([1, 1, 1, 2]))
    h = int(rng.integers(1, 40)); w = int(rng.integers(1, 60))
    oh = (h + 2 * pad - dil * (r - 1) - 1) // st + 1; ow = (w + 2 * pad - dil * (s - 1) - 1) // st + 1
    if oh < 1 or ow < 1:
        continue
    relu = bool(rng.integers(0, 2)); bias = bool(rng.integers(0, 2))
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    wt = rng.uniform(-1, 1, (k, 1, r, s)).astype(np.float32)
    b = rng.uniform(-1, 1, k).astype(np.float32) if bias else None
    outs = {}
    for lay in ("nchw", "nhwc", "nchw16c"):
        for threads in (1, 2, 3):
            pl = nova.ConvPlan((n, c, h, w, k), kernel=(r, s), padding=(pad, pad), stride=st, dilation=dil, groups=g,
                               weights=wt, bias=b, layout=lay, relu=relu, threads=threads, algorithm="direct")
            if lay == "nchw":
                xin = x; y = np.zeros((n, k, oh, ow), np.float32)
            elif lay == "nhwc":
                xin = np.ascontiguousarray(x.transpose(0, 2, 3, 1)); y = np.zeros((n, oh, ow, k), np.float32)
            else:
                xin = to16c(x); y = np.full((n, -(-k // 16), oh, ow, 16), np.nan, np.float32)
            pl.execute(xin, y)
            if lay == "nhwc":
                y = y.transpose(0, 3, 1, 2)
            elif lay == "nchw16c":
                full = y.transpose(0, 1, 4, 2, 3).reshape(n, -1, oh, ow)
                if k % 16 and not (np.all(full[:, k:] == 0) and not np.any(np.signbit(full[:, k:]))):
                    bad += 1; print("FAIL padding lanes", dict(n=n, c=c, k=k, h=h, w=w, r=r, s=s, st=st, dil=dil, pad=pad))
                y = full[:, :k]
            outs[(lay, threads)] = np.ascontiguousarray(y)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(),
                                     None if b is None else torch.from_numpy(b).double(), stride=st, padding=pad,
                                     dilation=dil, groups=g)
    if relu:
        ref = torch.relu(ref)
    ref = ref.numpy()
    base = outs[("nchw", 1)]
    err = np.linalg.norm(base - ref) / max(np.linalg.norm(ref), 1e-30)
    same = all(np.array_equal(v, base) for v in outs.values())
    checked += 1
    if not same or err > 1e-5:
        bad += 1
        print("FAIL", dict(n=n, c=c, k=k, h=h, w=w, r=r, s=s, st=st, dil=dil, pad=pad, relu=relu), err,
              [key for key, v in outs.items() if not np.array_equal(v, base)])
print(f"checked {checked} layers, bad {bad}")
