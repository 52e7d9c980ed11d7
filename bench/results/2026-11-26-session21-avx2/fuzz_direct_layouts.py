import numpy as np, torch, nova, sys
rng = np.random.default_rng(int(sys.argv[1])); bad = 0; n_rows = 0
for i in range(int(sys.argv[2])):
    r = int(rng.choice([1, 3, 5, 7])); g = int(rng.choice([1, 1, 1, 2, 3]))
    c = g * int(rng.integers(1, 12)); k = g * int(rng.integers(1, 30)); n = int(rng.integers(1, 3))
    h = int(rng.integers(1, 40)); w = int(rng.integers(1, 40)); st = int(rng.integers(1, 4)); dil = int(rng.integers(1, 3))
    pad = int(rng.integers(0, 4)); relu = bool(rng.integers(0, 2)); bias = bool(rng.integers(0, 2))
    oh = (h + 2*pad - dil*(r-1) - 1)//st + 1; ow = (w + 2*pad - dil*(r-1) - 1)//st + 1
    if oh < 1 or ow < 1: continue
    if c // g == 1: c = 2 * g  # not depthwise
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    wt = rng.uniform(-1, 1, (k, c//g, r, r)).astype(np.float32); b = rng.uniform(-1, 1, k).astype(np.float32) if bias else None
    outs = {}
    for lay in ("nchw", "nhwc"):
        pl = nova.ConvPlan((n, c, h, w, k), kernel=(r, r), padding=(pad, pad), stride=st, dilation=dil, groups=g, weights=wt, bias=b,
                           layout=lay, relu=relu, threads=int(rng.integers(1, 3)), algorithm="direct")
        xin = x if lay == "nchw" else np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        y = np.zeros((n, k, oh, ow) if lay == "nchw" else (n, oh, ow, k), np.float32); pl.execute(xin, y)
        outs[lay] = y if lay == "nchw" else y.transpose(0, 3, 1, 2)
        if lay == "nchw" and "nchw" in repr(pl): pass
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(), None if b is None else torch.from_numpy(b).double(), stride=st, padding=pad, dilation=dil, groups=g)
    if relu: ref = torch.relu(ref)
    ref = ref.numpy(); err = np.linalg.norm(outs["nchw"] - ref) / max(np.linalg.norm(ref), 1e-30)
    if not np.array_equal(outs["nchw"], outs["nhwc"]) or err > 1e-5:
        bad += 1; print("FAIL", dict(n=n, c=c, k=k, h=h, w=w, r=r, g=g, st=st, dil=dil, pad=pad), err, np.abs(outs["nchw"]-outs["nhwc"]).max())
print("bad", bad)
