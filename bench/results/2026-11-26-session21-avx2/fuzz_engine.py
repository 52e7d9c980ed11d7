"""Exploratory fuzz: wider shapes than python/tests/test_random_shapes.py draws."""
import sys, time, traceback
import numpy as np, torch, nova
BOUND = {"fp32": 1e-4, "fp16": 6e-2, "bf16": 1.5e-1, "int8": 4e-1, "int8-spatial": 6e-2}
BOUND_10 = {"fp16": 3e-1, "bf16": 4e-1}

def to_layout(x, layout):
    if layout == "nchw": return np.ascontiguousarray(x)
    if layout == "nhwc": return np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    n, c, h, w = x.shape; cb = (c + 15) // 16
    z = np.zeros((n, cb * 16, h, w), x.dtype); z[:, :c] = x
    return np.ascontiguousarray(z.reshape(n, cb, 16, h, w).transpose(0, 1, 3, 4, 2))

def from_layout(y, layout, c):
    if layout == "nchw": return y
    if layout == "nhwc": return y.transpose(0, 3, 1, 2)
    n, cb, h, w, _ = y.shape
    return y.transpose(0, 1, 4, 2, 3).reshape(n, cb * 16, h, w)[:, :c]

def out_buf(layout, n, k, oh, ow):
    if layout == "nchw": return np.zeros((n, k, oh, ow), np.float32)
    if layout == "nhwc": return np.zeros((n, oh, ow, k), np.float32)
    return np.zeros((n, (k + 15) // 16, oh, ow, 16), np.float32)

def draw(rng):
    r = int(rng.choice([3, 3, 3, 5]))
    c = int(rng.choice([1, 3, 16, 17, 31, 48, 64, 65, 100, 130, 257]))
    k = int(rng.choice([1, 5, 16, 24, 33, 64, 96, 129]))
    g = 1; stride = 1; dil = 1; tile = ""
    kind = int(rng.integers(0, 8))
    if kind == 0:  # depthwise, channel multiplier 1..3
        g = c; k = c * int(rng.integers(1, 4))
        stride = int(rng.integers(1, 3))
    elif kind == 1:
        stride = 2
    elif kind == 2:
        dil = 2
    elif kind == 3:
        g = int(rng.choice([2, 4])); c = g * max(1, c // g); k = g * max(1, k // g)
    prec = str(rng.choice(list(BOUND)))
    if kind >= 5:
        tiles = ["2,3", "4,3", "6,3", "7,3", "8,3"] if r == 3 else ["2,5", "4,5"]
        if prec == "int8": tiles = tiles[:2]
        if prec == "int8-spatial": tiles = [t for t in tiles if t in ("2,3", "4,3")] or [""]
        tile = str(rng.choice(tiles))
    hw = int(rng.choice([1, 2, 5, 7, 13, 14, 28, 31, 56]))
    hw2 = hw if rng.integers(0, 2) else int(rng.integers(1, 40))
    n = int(rng.choice([1, 1, 2, 3]))
    while n * c * hw * hw2 > 400000: hw = max(1, hw // 2); hw2 = max(1, hw2 // 2)
    return dict(n=n, c=c, k=k, h=hw, w=hw2, r=r, pad=int(rng.integers(0, 3)), stride=stride, dil=dil, g=g,
                prec=prec, layout=str(rng.choice(["nchw", "nhwc", "nchw16c"])), tile=tile,
                bias=bool(rng.integers(0, 2)), relu=bool(rng.integers(0, 4) == 0), calib=bool(rng.integers(0, 3) == 0))

def run(case, seed):
    rng = np.random.default_rng(seed)
    n, c, h, w, k, r, g = case["n"], case["c"], case["h"], case["w"], case["k"], case["r"], case["g"]
    oh = (h + 2 * case["pad"] - case["dil"] * (r - 1) - 1) // case["stride"] + 1
    ow = (w + 2 * case["pad"] - case["dil"] * (r - 1) - 1) // case["stride"] + 1
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    wt = (rng.uniform(-1, 1, (k, c // g, r, r)) / np.sqrt(c // g * r * r)).astype(np.float32)
    b = rng.uniform(-1, 1, k).astype(np.float32) if case["bias"] else None
    kw = dict(kernel=(r, r), padding=(case["pad"],) * 2, stride=case["stride"], dilation=case["dil"], groups=g,
              weights=wt, bias=b, layout=case["layout"], relu=case["relu"], tile=case["tile"], precision=case["prec"])
    if oh < 1 or ow < 1:
        try:
            nova.ConvPlan((n, c, h, w, k), threads=1, **kw); return "NOREFUSE"
        except ValueError: return None
    try:
        plans = [nova.ConvPlan((n, c, h, w, k), threads=t, **kw) for t in (1, 2)]
    except ValueError as e:
        if case["prec"] == "int8-spatial" and "int16" in str(e): return None
        return f"REFUSED {e}"
    xin = to_layout(x, case["layout"])
    ys = []
    for p in plans:
        if case["calib"] and case["prec"].startswith("int8") and p.algorithm.startswith("winograd"):
            p.calibrate([xin])
        y = out_buf(case["layout"], n, k, oh, ow); p.execute(xin, y); ys.append(y)
    if not np.array_equal(ys[0], ys[1], equal_nan=True):
        d0 = repr(plans[0]).replace("1 thread(s)", "T"); d1 = repr(plans[1]).replace("2 thread(s)", "T")
        d0 = d0.split("; auto")[0]; d1 = d1.split("; auto")[0]
        if d0 == d1:
            return f"THREADS differ max {np.nanmax(np.abs(ys[0]-ys[1]))} {plans[0]!r}"
    y = from_layout(ys[0], case["layout"], k)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(),
                                     None if b is None else torch.from_numpy(b).double(), stride=case["stride"],
                                     padding=case["pad"], dilation=case["dil"], groups=g)
    if case["relu"]: ref = torch.relu(ref)
    ref = ref.numpy()
    if not np.isfinite(y).all(): return f"NONFINITE {plans[0]!r}"
    if case["layout"] == "nchw16c" and k % 16:
        pad_lanes = ys[0][:, -1, :, :, k % 16:]
        if np.any(pad_lanes != 0): return f"PADLANES nonzero {plans[0]!r}"
    scale = max(float(np.linalg.norm(ref)), 1e-3 * float(np.sqrt(ref.size)))
    err = float(np.linalg.norm(y.astype(np.float64) - ref)) / scale
    large = case["tile"] in ("7,3", "8,3")
    bnd = BOUND_10.get(case["prec"], BOUND[case["prec"]]) if large else BOUND[case["prec"]]
    if err >= bnd: return f"ERROR {err:.3g} >= {bnd} {plans[0]!r}"
    return err

seed0 = int(sys.argv[1]); count = int(sys.argv[2])
rng = np.random.default_rng(seed0); bad = 0; t0 = time.time(); worst = {}
for i in range(count):
    case = draw(rng)
    try:
        out = run(case, seed0 * 100000 + i)
    except Exception as e:
        out = f"EXCEPTION {type(e).__name__}: {e}"
    if isinstance(out, str):
        bad += 1; print("FAIL", i, case, out, flush=True)
    elif out is not None:
        worst[case["prec"]] = max(worst.get(case["prec"], 0), out)
print(f"seed {seed0}: {count} cases, {bad} failures, {time.time()-t0:.0f} s, worst {worst}", flush=True)
