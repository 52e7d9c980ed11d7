"""The Python reference emulation of Winograd convolution (validation/winograd_ref.py)."""
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import winograd_ref as wr

ALL_SETS = [(m, r, name) for (m, r), d in wr.POINT_SETS.items() for name in d]


@pytest.mark.parametrize("m,r,name", ALL_SETS)
def test_point_sets_are_exact_and_match_1d_correlation(m, r, name):
    for nm in (name, name + "+bal"):
        t = wr.point_set(m, r, nm)  # verify() runs inside: exact in Fractions
        AT, G, BT = t.mats()
        rng = np.random.default_rng(m * 100 + len(nm))
        d, g = rng.standard_normal(t.n), rng.standard_normal(r)
        y = AT @ ((G @ g) * (BT @ d))
        ref = np.correlate(d, g, mode="valid")  # independent: numpy's correlation
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-9 * (1 + np.abs(ref).max()) * t.max_abs_entry() ** 2)


def test_exact_product_in_fractions_against_direct_correlation():
    """Independent of verify(): random rational data through the exact matrices."""
    t = wr.point_set(6, 3, "nova")
    rng = np.random.default_rng(5)
    d = [Fraction(int(v), 7) for v in rng.integers(-50, 50, t.n)]
    g = [Fraction(int(v), 3) for v in rng.integers(-50, 50, t.r)]
    Gg = [sum(t.G[a][k] * g[k] for k in range(t.r)) for a in range(t.n)]
    Bd = [sum(t.BT[a][i] * d[i] for i in range(t.n)) for a in range(t.n)]
    y = [sum(t.AT[o][a] * Gg[a] * Bd[a] for a in range(t.n)) for o in range(t.m)]
    assert y == [sum(d[o + k] * g[k] for k in range(t.r)) for o in range(t.m)]


def test_verify_rejects_a_corrupted_transform():
    t = wr.point_set(4, 3, "standard")
    t.BT[2][1] += Fraction(1, 1000)
    with pytest.raises(ValueError, match="not exact"):
        wr.verify(t)


def test_balanced_scaling_is_powers_of_two_and_shrinks_entries():
    t, b = wr.point_set(8, 3, "tvm"), wr.point_set(8, 3, "tvm+bal")
    assert b.max_abs_entry() < t.max_abs_entry() / 100
    for a in range(t.n):  # each row/column scaled by a power of two
        for M0, M1 in ((t.G, b.G), (t.BT, b.BT)):
            ratios = {M1[a][j] / M0[a][j] for j in range(len(M0[a])) if M0[a][j] != 0}
            assert len(ratios) == 1
            (q,) = ratios
            assert q.numerator & (q.numerator - 1) == 0 and q.denominator & (q.denominator - 1) == 0


@pytest.mark.parametrize("bad,msg", [("0,1,-1,inf", "needs n"), ("0,1,1,2,-2,inf", "distinct"),
                                     ("0,1,-1,2,inf,inf", "infinity"), ("0,1,-1,2,x,inf", "bad interpolation")])
def test_bad_points_are_rejected(bad, msg):
    with pytest.raises(ValueError, match=msg):
        wr.cook_toom(4, 3, bad)


def _conv_case(seed, N=2, C=5, H=13, W=11, K=7, r=3, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, C, H, W, generator=g, dtype=dtype)
    w = torch.randn(K, C, r, r, generator=g, dtype=dtype)
    b = torch.randn(K, generator=g, dtype=dtype)
    return x, w, b


@pytest.mark.parametrize("m,r,name", ALL_SETS)
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_fp64_winograd_equals_direct_conv(m, r, name, padding):
    x, w, b = _conv_case(m + padding, H=13 + padding, W=9 + 2 * padding)
    t = wr.point_set(m, r, name)
    y = wr.winograd_conv2d(x, w, b, padding, t, "fp64")
    ref = F.conv2d(x, w, b, padding=padding)
    assert y.shape == ref.shape
    assert ((y - ref).norm() / ref.norm()).item() < 1e-9


def test_fp64_winograd_5x5_kernel():
    t = wr.cook_toom(4, 5, "0,1,-1,2,-2,1/2,-1/2,inf")
    x, w, b = _conv_case(9, r=5, H=17, W=10)
    y = wr.winograd_conv2d(x, w, b, 2, t, "fp64")
    ref = F.conv2d(x, w, b, padding=2)
    assert ((y - ref).norm() / ref.norm()).item() < 1e-12


# Tolerance for the fp32 preset: FP32 Winograd costs accuracy (DESIGN.md: about 2x, 8x, 40x a direct
# FP32 convolution with good transforms, much more with the standard F(8,3) points).
FP32_TOL = {(4, "standard"): 1e-5, (4, "nova"): 1e-5, (4, "nova-dyadic"): 1e-5, (4, "onednn-old"): 1e-5,
            (6, "practitioners"): 2e-5, (6, "nova"): 1e-4, (6, "standard"): 5e-4,
            (7, "standard"): 3e-2,  # F(7,3): no published set; the standard points measure 7.6e-3
            (8, "tvm"): 2e-4, (8, "nova"): 1e-3, (8, "standard"): 1e-1}


@pytest.mark.parametrize("m,r,name", ALL_SETS)
def test_fp32_winograd_equals_direct_conv_to_float_tolerance(m, r, name):
    x, w, b = _conv_case(m, C=16, H=15, W=17, K=8, dtype=torch.float32)
    t = wr.point_set(m, r, name)
    y = wr.winograd_conv2d(x, w, b, 1, t, "fp32")
    assert y.dtype == torch.float32
    ref = F.conv2d(x.double(), w.double(), b.double(), padding=1)
    err = ((y.double() - ref).norm() / ref.norm()).item()
    direct32 = ((F.conv2d(x, w, b, padding=1).double() - ref).norm() / ref.norm()).item()
    assert err < FP32_TOL[(m, name)]
    assert err > 0.5 * direct32  # it really ran in fp32, not float64


def _bf16_rne_numpy(a: np.ndarray) -> np.ndarray:
    """bfloat16 round-to-nearest-even by bit manipulation: an implementation independent of torch."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    bias = 0x7FFF + ((u >> 16) & 1)
    r = ((u + bias) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), r)


def test_rounding_matches_independent_implementations():
    rng = np.random.default_rng(0)
    vals = np.concatenate([rng.standard_normal(20000) * 10.0 ** rng.integers(-9, 6, 20000),
                           [65504, 65519.99, 65520, 1e6, -7e4, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26,
                            1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 0.0, -0.0]])
    v32 = vals.astype(np.float32)
    t = torch.from_numpy(v32)
    h = wr._rnd(torch.float16)(t).numpy()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h, v32.astype(np.float16).astype(np.float32))
    assert np.isinf(h[np.abs(v32) >= 65520]).all()  # IEEE overflow to inf
    assert h[list(v32).index(np.float32(1 + 2.0 ** -11))] == 1.0  # halfway rounds to even
    bf = wr._rnd(torch.bfloat16)(t).numpy()
    np.testing.assert_array_equal(bf, _bf16_rne_numpy(v32))


def test_int8_plumbing_converges_to_fp32_with_more_levels(monkeypatch):
    """With 2^22 quantization levels instead of 127 every int8 preset must approach the fp32 result;
    with 127 levels the error must be far larger (it is real quantization)."""
    x, w, b = _conv_case(1, C=8, H=12, W=12, K=4, dtype=torch.float32)
    t = wr.point_set(4, 3, "standard")
    ref = F.conv2d(x.double(), w.double(), b.double(), padding=1)
    rel = lambda y: ((y.double() - ref).norm() / ref.norm()).item()
    for p in ("int8-tensor", "int8-channel", "int8-tap"):
        e127 = rel(wr.winograd_conv2d(x, w, b, 1, t, p))
        monkeypatch.setattr(wr, "INT8_QMAX", 2 ** 22)
        efine = rel(wr.winograd_conv2d(x, w, b, 1, t, p))
        monkeypatch.setattr(wr, "INT8_QMAX", 127)
        assert efine < 2e-4, p  # 2^-22 of the (per-tensor) max, amplified by the transform
        assert e127 > 1e3 * efine, p


def test_int8_scale_granularity_order():
    """Finer scales cannot lose: per-tap error <= per-tensor error for the unbalanced standard F(6,3)."""
    x, w, b = _conv_case(2, C=16, H=14, W=14, K=8, dtype=torch.float32)
    x = torch.relu(x)
    t = wr.point_set(6, 3, "standard")
    ref = F.conv2d(x.double(), w.double(), b.double(), padding=1)
    rel = {p: ((wr.winograd_conv2d(x, w, b, 1, t, p).double() - ref).norm() / ref.norm()).item()
           for p in ("int8-tensor", "int8-tap")}
    assert rel["int8-tap"] < rel["int8-tensor"]


def test_fp16_storage_overflow_gives_inf_and_counts():
    """Standard F(8,3) entries reach 1.6e4: activations of magnitude ~20 overflow fp16 in V."""
    x, w, b = _conv_case(3, C=4, H=16, W=16, K=4, dtype=torch.float32)
    st = wr.Stats()
    y = wr.winograd_conv2d(x * 20, w, b, 1, wr.point_set(8, 3, "standard"), "fp16-storage", stats=st)
    assert st.nan + st.inf > 0 and st.nan + st.inf == int((~torch.isfinite(y)).sum())
    st2 = wr.Stats()
    wr.winograd_conv2d(x * 20, w, b, 1, wr.point_set(8, 3, "nova"), "fp16-storage", stats=st2)
    assert st2.nan + st2.inf == 0


def test_bad_input_to_conv():
    x, w, b = _conv_case(0)
    t = wr.point_set(4, 3, "standard")
    with pytest.raises(ValueError, match="unknown preset"):
        wr.winograd_conv2d(x, w, b, 1, t, "fp12")
    with pytest.raises(ValueError, match="does not fit"):
        wr.winograd_conv2d(x, w[:, :3], b, 1, t, "fp32")
    with pytest.raises(ValueError, match="expected x"):
        wr.winograd_conv2d(x[0], w, b, 1, t, "fp32")


def test_fp16_all_transform_rounds_every_operation_like_numpy_float16():
    """The fp16-all transforms against an independent loop in numpy float16 arithmetic
    (each numpy float16 multiply and add is rounded to fp16)."""
    t = wr.point_set(6, 3, "practitioners")
    _, _, BT = t.mats(np.float32)
    rng = np.random.default_rng(7)
    X = (rng.standard_normal((5, t.n, t.n)) * 3).astype(np.float16)
    got = wr._transform2d(torch.from_numpy(X.astype(np.float32)), torch.from_numpy(BT), fp16_ops=True).numpy()
    B16 = BT.astype(np.float16)
    want = np.zeros((5, t.n, t.n), dtype=np.float16)
    for b in range(5):
        Y = np.zeros((t.n, t.n), dtype=np.float16)  # Y = X B, summed in index order
        for i in range(t.n):
            for j in range(t.n):
                acc = None
                for k in range(t.n):
                    if not np.any(B16.T[k]):
                        continue
                    term = np.float16(X[b, i, k] * B16[j, k])
                    acc = term if acc is None else np.float16(acc + term)
                Y[i, j] = acc
        for i in range(t.n):
            for j in range(t.n):
                acc = None
                for k in range(t.n):
                    if not np.any(B16.T[k]):
                        continue
                    term = np.float16(Y[k, j] * B16[i, k])
                    acc = term if acc is None else np.float16(acc + term)
                want[b, i, j] = acc
    np.testing.assert_array_equal(got.astype(np.float16), want)


def test_construction_matches_novas_exact_core_when_available():
    """Cross-check with nova's own exact core (C++, GMP) when its Python package imports: nova's
    'wincnn' scaling is this construction up to the sign of each Winograd position's row."""
    nova = pytest.importorskip("nova")
    for (m, r), sets in wr.POINT_SETS.items():
        for name in sets:
            mine = wr.point_set(m, r, name)
            theirs = nova.Transform(f"{m},{r}", mine.points_str(), "wincnn")
            AT, G, BT = mine.mats()
            sgn = np.sign(np.where(np.abs(G).sum(1) > 0, (theirs.G * G).sum(1), 1.0))
            np.testing.assert_allclose(theirs.AT, AT, rtol=1e-15, atol=0)
            np.testing.assert_allclose(theirs.G, G * sgn[:, None], rtol=1e-15, atol=0)
            np.testing.assert_allclose(theirs.BT, BT * sgn[:, None], rtol=1e-15, atol=0)
