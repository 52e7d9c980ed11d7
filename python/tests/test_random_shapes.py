"""Random convolutions through nova.ConvPlan against PyTorch's float64 conv2d (an implementation nova shares
nothing with): shapes with odd sizes and channel counts that are not multiples of the vector width, 3x3 and
5x5 kernels, padding 0-2, stride and dilation 1-2, groups, every precision, NCHW and NHWC, 1 and 2
threads, automatic and forced tiles, and (second test) bf16 / fp16 / int8 input and output tensors. Every
plan must either run and land within its precision's error range with finite outputs, or refuse with a
ValueError that says why (a kernel larger than the padded input; int8-spatial on a tile whose integer
transform does not fit int16).

The error ranges are each precision's worst case over the tiles on tiny layers (few channels to average
over), well above what the layer set measures (docs/engine.md) and far below what a wrong answer gives
(a dropped tap, a transposed filter or a misplaced tile costs O(1)).
"""
import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import nova  # noqa: E402

# Relative L2 error against float64 that each precision must stay under, for tiles of up to 8 points
# (the automatic choice's range); F(7,3) and F(8,3) (9 and 10 points, in fp16 and bf16 only when asked
# for) in fp16 and bf16: BOUND_10.
BOUND = {"fp32": 1e-4, "fp16": 6e-2, "bf16": 1.5e-1, "int8": 4e-1, "int8-spatial": 6e-2}
BOUND_10 = {"fp16": 3e-1, "bf16": 4e-1}
TILES = {3: ["2,3", "4,3", "6,3", "7,3", "8,3"], 5: ["2,5", "4,5"]}


def bound(case):
    large = case["tile"] in ("7,3", "8,3")
    return BOUND_10.get(case["precision"], BOUND[case["precision"]]) if large else BOUND[case["precision"]]


def draw(rng):
    k = int(rng.choice([3, 5]))
    case = {
        "n": int(rng.integers(1, 4)), "c": int(rng.integers(1, 41)), "k_out": int(rng.integers(1, 41)),
        "h": int(rng.integers(1, 21)), "w": int(rng.integers(1, 21)), "kernel": k, "pad": int(rng.integers(0, 3)),
        "stride": 1, "dilation": 1, "groups": 1, "precision": str(rng.choice(list(BOUND))),
        "layout": str(rng.choice(["nchw", "nhwc"])), "threads": int(rng.integers(1, 3)), "tile": "",
        "bias": bool(rng.integers(0, 2)), "relu": bool(rng.integers(0, 4) == 0),
    }
    shape_kind = rng.integers(0, 6)
    if shape_kind == 0:
        case["stride"] = 2
    elif shape_kind == 1:
        case["dilation"] = 2
    elif shape_kind == 2:
        case["groups"] = int(rng.choice([2, 3]))
        case["c"] = case["groups"] * max(1, case["c"] // case["groups"])
        case["k_out"] = case["groups"] * max(1, case["k_out"] // case["groups"])
    elif shape_kind == 3:  # int8: tiles of up to 6 points (beyond, its error is out of range by design)
        case["tile"] = str(rng.choice(TILES[k][:2] if case["precision"] == "int8" else TILES[k]))
    return case


def output_size(size, case):
    return (size + 2 * case["pad"] - case["dilation"] * (case["kernel"] - 1) - 1) // case["stride"] + 1


def run_case(case, seed):
    rng = np.random.default_rng(seed)
    n, c, h, w, k_out, r = case["n"], case["c"], case["h"], case["w"], case["k_out"], case["kernel"]
    x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
    wt = (rng.uniform(-1, 1, (k_out, c // case["groups"], r, r)) / np.sqrt(c // case["groups"] * r * r)).astype(
        np.float32)
    b = rng.uniform(-1, 1, k_out).astype(np.float32) if case["bias"] else None
    kwargs = dict(kernel=(r, r), padding=(case["pad"], case["pad"]), stride=case["stride"],
                  dilation=case["dilation"], groups=case["groups"], weights=wt, bias=b, layout=case["layout"],
                  relu=case["relu"], threads=case["threads"], tile=case["tile"], precision=case["precision"])
    oh, ow = output_size(h, case), output_size(w, case)
    if oh < 1 or ow < 1:
        with pytest.raises(ValueError, match="exceeds padded input"):
            nova.ConvPlan((n, c, h, w, k_out), **kwargs)
        return None
    if case["precision"] == "int8-spatial" and case["tile"] not in ("", "2,3", "4,3"):
        # Its integer transforms fit int16 for F(2,3) and F(4,3) only: other tiles are refused, saying so.
        with pytest.raises(ValueError, match="int8-spatial.*int16"):
            nova.ConvPlan((n, c, h, w, k_out), **kwargs)
        return None
    plan = nova.ConvPlan((n, c, h, w, k_out), **kwargs)
    nhwc = case["layout"] == "nhwc"
    xin = np.ascontiguousarray(x.transpose(0, 2, 3, 1)) if nhwc else x
    y = np.zeros((n, oh, ow, k_out) if nhwc else (n, k_out, oh, ow), np.float32)
    plan.execute(xin, y)
    if nhwc:
        y = y.transpose(0, 3, 1, 2)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(wt).double(),
                                     None if b is None else torch.from_numpy(b).double(), stride=case["stride"],
                                     padding=case["pad"], dilation=case["dilation"], groups=case["groups"])
    if case["relu"]:
        ref = torch.relu(ref)
    ref = ref.numpy()
    assert np.isfinite(y).all(), f"non-finite output: {plan!r}"
    scale = max(float(np.linalg.norm(ref)), 1e-3 * float(np.sqrt(ref.size)))  # all-zero ReLU outputs
    return float(np.linalg.norm(y.astype(np.float64) - ref)) / scale, repr(plan)


@pytest.mark.parametrize("chunk", range(4))
def test_random_convolutions_match_float64(chunk):
    rng = np.random.default_rng(1000 + chunk)
    worst = {}
    for i in range(150):
        case = draw(rng)
        out = run_case(case, seed=chunk * 1000 + i)
        if out is None:
            continue
        err, desc = out
        p = case["precision"]
        assert err < bound(case), f"case {case}: rel L2 error {err:.3g} over {bound(case):g} ({desc})"
        worst[p] = max(worst.get(p, 0.0), err)
    print("worst relative L2 error by precision:", {p: f"{e:.2e}" for p, e in worst.items()})


# Typed tensors (bf16 / fp16 / int8 in and out, the engine's conversions at pack and store): the
# reference is the float64 convolution of the input's values in its type; the output's own rounding
# widens the range by half a step of its type at most (int8: of max|y| / 127 per element).
OUT_ROUNDING = {"fp32": 0.0, "fp16": 2e-3, "bf16": 1e-2, "int8": 3e-2}


def typed_input(x, typ):
    """(the array the plan takes, its values as float64)."""
    if typ == "fp32":
        return x, x.astype(np.float64)
    if typ == "fp16":
        h = x.astype(np.float16)
        return h, h.astype(np.float64)
    if typ == "bf16":  # bf16 bits by truncation (exact values either way)
        b = (x.view(np.uint32) >> 16).astype(np.uint16)
        return b, (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    q = np.clip(np.rint(x * 127), -127, 127).astype(np.int8)
    return q, q.astype(np.float64) / 127


def typed_values(y, typ, scale):
    if typ == "bf16":
        return (y.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if typ == "int8":
        return y.astype(np.float64) * scale
    return y.astype(np.float64)


@pytest.mark.parametrize("chunk", range(2))
def test_random_typed_tensors_match_float64(chunk):
    rng = np.random.default_rng(2000 + chunk)
    dtypes = {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16, "int8": np.int8}
    checked = 0
    while checked < 80:
        case = draw(rng)
        n, c, h, w, k_out, r = case["n"], case["c"], case["h"], case["w"], case["k_out"], case["kernel"]
        oh, ow = output_size(h, case), output_size(w, case)
        if oh < 1 or ow < 1 or (case["precision"] == "int8-spatial" and case["tile"] not in ("", "2,3", "4,3")):
            continue
        in_type, out_type = str(rng.choice(list(dtypes))), str(rng.choice(list(dtypes)))
        x = rng.uniform(-1, 1, (n, c, h, w)).astype(np.float32)
        g = case["groups"]
        wt = (rng.uniform(-1, 1, (k_out, c // g, r, r)) / np.sqrt(c // g * r * r)).astype(np.float32)
        xt, xv = typed_input(x, in_type)
        ref = torch.nn.functional.conv2d(torch.from_numpy(xv), torch.from_numpy(wt).double(), stride=case["stride"],
                                         padding=case["pad"], dilation=case["dilation"], groups=g)
        ref = (torch.relu(ref) if case["relu"] else ref).numpy()
        out_scale = max(float(np.abs(ref).max()), 1e-3) / 127
        plan = nova.ConvPlan((n, c, h, w, k_out), kernel=(r, r), padding=(case["pad"], case["pad"]),
                             stride=case["stride"], dilation=case["dilation"], groups=g, weights=wt,
                             relu=case["relu"], threads=case["threads"], tile=case["tile"],
                             precision=case["precision"], input_type=in_type, output_type=out_type,
                             input_scale=1 / 127, output_scale=out_scale)
        y = np.zeros((n, k_out, oh, ow), dtypes[out_type])
        plan.execute(np.ascontiguousarray(xt), y)
        yv = typed_values(y, out_type, out_scale)
        assert np.isfinite(yv).all(), f"non-finite output: {plan!r}"
        scale = max(float(np.linalg.norm(ref)), 1e-3 * float(np.sqrt(ref.size)))
        err = float(np.linalg.norm(yv - ref)) / scale
        limit = bound(case) + OUT_ROUNDING[out_type]
        assert err < limit, f"case {case}, {in_type} in, {out_type} out: rel L2 error {err:.3g} over {limit:g} ({plan!r})"
        checked += 1
