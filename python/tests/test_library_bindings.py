"""Analysis, precision models, the error harness, discovery and the catalogue from Python, checked
against independent references: numpy's SVD, a numpy emulation of the fp16-storage pipeline with a
float64 direct convolution, Python's exact fractions."""
from fractions import Fraction

import numpy as np
import pytest

nova = pytest.importorskip("nova")


def vandermonde(points):
    """The Vandermonde matrix x_i^j of the finite points (the seed's V; infinity has no row)."""
    finite = [Fraction(p) for p in points if p != "inf"]
    return np.array([[float(x**j) for j in range(len(finite))] for x in finite])


@pytest.mark.parametrize("tile,points", [("4,3", "0,±1,±2,inf"), ("6,3", "0,±1,±2,±1/2,inf"), ("2,5", "0,±1,±2,inf")])
def test_analyze_kappa_v_matches_numpy(tile, points):
    t = nova.Transform(tile, points)
    a = nova.analyze(t, two_d=False)
    expected = np.linalg.cond(vandermonde(t.points))
    assert a["matrices"]["V"]["1d"]["kappa2"] == pytest.approx(expected, rel=1e-9)
    # kappa_2 of G from numpy too: the analysis covers the transform's own matrices.
    assert a["matrices"]["G"]["1d"]["kappa2"] == pytest.approx(np.linalg.cond(t.G), rel=1e-9)
    assert a["verified"] is True


def test_precision_models_round_trip_and_reject_unknown_names():
    assert {"fp32", "fp16-storage", "bf16-storage", "int8-tap"} <= set(nova.precision_presets())
    model = nova.precision_model("int8-tap")
    assert model["accumulate"] == "int32"
    assert nova.precision_model(model) == model  # the dict form is accepted back, unchanged
    with pytest.raises(ValueError, match="fp17"):
        nova.precision_model("fp17-storage")
    bad = dict(model, input_transfrom="fp16")  # a typo must not silently mean fp64
    with pytest.raises(ValueError):
        nova.precision_model(bad)


def fp16(x):
    return x.astype(np.float16).astype(np.float64)


def emulate_fp16_storage(t, x, w):
    """fp16-storage by hand: float32 transforms, U and V rounded to fp16, float32 products and sums.
    x [C, H, W], w [K, C, r, r], stride 1, same padding; tiles cut from the zero-padded input."""
    m, r, n = t.m, t.r, t.n
    AT, G, BT = (a.astype(np.float32) for a in (t.AT, t.G, t.BT))
    C, H, W = x.shape
    K = w.shape[0]
    p = (r - 1) // 2
    th, tw = -(-H // m), -(-W // m)
    xp = np.zeros((C, th * m + r - 1, tw * m + r - 1), np.float32)
    xp[:, p : p + H, p : p + W] = x
    U = fp16(np.einsum("ar,kcrs,bs->kcab", G, w.astype(np.float32), G).astype(np.float32)).astype(np.float32)
    y = np.zeros((K, th * m, tw * m))
    for i in range(th):
        for j in range(tw):
            d = xp[:, i * m : i * m + n, j * m : j * m + n]
            V = fp16(np.einsum("ai,cij,bj->cab", BT, d, BT).astype(np.float32)).astype(np.float32)
            M = np.einsum("kcab,cab->kab", U, V).astype(np.float32)
            y[:, i * m : (i + 1) * m, j * m : (j + 1) * m] = np.einsum("ia,kab,jb->kij", AT, M, AT)
    return y[:, :H, :W]


def direct(x, w):
    C, H, W = x.shape
    K, _, r, _ = w.shape
    p = (r - 1) // 2
    xp = np.pad(x, ((0, 0), (p, p), (p, p)))
    y = np.zeros((K, H, W))
    for u in range(r):
        for v in range(r):
            y += np.einsum("kc,chw->khw", w[:, :, u, v], xp[:, u : u + H, v : v + W])
    return y


def test_error_layer_agrees_with_an_independent_fp16_storage_emulation():
    rng = np.random.default_rng(7)
    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    x = fp16(rng.standard_normal((1, 8, 13, 11)))  # fp16 data: the stored input equals the given one
    w = fp16(rng.standard_normal((4, 8, 3, 3)))
    got = nova.error_layer(t, np.ascontiguousarray(x), np.ascontiguousarray(w), "fp16-storage")
    ref = direct(x[0], w)
    mine = emulate_fp16_storage(t, x[0], w)
    expected = np.linalg.norm(mine - ref) / np.linalg.norm(ref)
    assert got["winograd"]["nan_count"] == 0 and got["winograd"]["count"] == ref.size
    # Same rounding points, different float32 summation orders: agreement to tens of percent, while
    # the fp16 error itself is ~1e-3 and the float32 one ~1e-7.
    assert got["winograd"]["rel_l2"] == pytest.approx(expected, rel=0.3)
    exact = nova.error_layer(t, np.ascontiguousarray(x), np.ascontiguousarray(w), "fp64")
    assert exact["winograd"]["rel_l2"] < 1e-13
    assert got["winograd"]["rel_l2"] > 100 * got["direct"]["rel_l2"]


def test_error_on_generated_tiles_orders_point_sets_as_expected():
    # F(6,3): the practitioners' points {0,±1,±2,±1/2} are far better conditioned than the seed's
    # "standard" {0,±1,±2,±3}; in fp16 storage their error must be lower.
    good = nova.error(nova.Transform("6,3", "0,±1,±2,±1/2,inf"), "fp16-storage", tiles=500, channels=16, seed=3)
    bad = nova.error(nova.Transform("6,3", "0,±1,±2,±3,inf"), "fp16-storage", tiles=500, channels=16, seed=3)
    assert good["winograd"]["count"] == 500 * 36
    assert good["winograd"]["rel_l2"] < bad["winograd"]["rel_l2"]
    assert good["direct"]["rel_l2"] == bad["direct"]["rel_l2"]  # the same data, no Winograd


def test_error_bad_input():
    t = nova.Transform("4,3")
    x = np.zeros((1, 2, 6, 6))
    w = np.zeros((3, 2, 3, 3))
    w_nan = w.copy()
    w_nan[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        nova.error_layer(t, x, w_nan, "fp16-storage")
    with pytest.raises(ValueError, match="channels"):
        nova.error_layer(t, x, np.zeros((3, 5, 3, 3)), "fp16-storage")
    with pytest.raises(ValueError, match="5x5"):
        nova.error_layer(t, x, np.zeros((3, 2, 5, 5)), "fp16-storage")
    with pytest.raises(ValueError):
        nova.error(t, "no-such-preset")
    with pytest.raises(ValueError):
        nova.error(t, "fp16-storage", data="laplace")
    with pytest.raises(ValueError):
        nova.error(t, "fp16-storage", tiles=0)
    # The library's message offered .npy data, which only `nova error --data` reads.
    with pytest.raises(ValueError, match="a layer's own arrays: nova.error_layer"):
        nova.error(t, "fp16-storage", data="x.npy")
    # Seeds: any int from 0 to 2^64 - 1 (a negative one got nanobind's signature dump).
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match=f"seed must be an integer from 0 to 2\\^64 - 1, got {bad}"):
            nova.error(t, "fp32", tiles=4, channels=1, seed=bad)
        with pytest.raises(ValueError, match="seed must be an integer"):
            nova.discover("2,3", seed=bad)
    assert nova.error(t, "fp32", tiles=4, channels=1, seed=2**64 - 1) == nova.error(t, "fp32", tiles=4, channels=1,
                                                                                   seed=2**64 - 1)


def test_discover_beats_the_standard_points_and_verifies():
    t, info = nova.discover("4,3", seed=1)
    assert t.verify() == (True, "")
    assert len(set(t.points)) == len(t.points) == 6
    kappa = np.linalg.cond(vandermonde(t.points))
    assert info["kappa2_v"] == pytest.approx(kappa, rel=1e-9)
    assert kappa < np.linalg.cond(vandermonde(["0", "1", "-1", "2", "-2", "inf"]))
    again, _ = nova.discover("4,3", seed=1)
    assert again.points == t.points  # deterministic for a seed
    with pytest.raises(ValueError):
        nova.discover("4,3", objective="no-such-objective")


def test_catalogue_entries_are_exact_and_verified():
    entries = nova.catalogue_entries()
    assert entries, "the shipped catalogue is empty"
    tiles = {e["tile"] for e in entries}
    assert {"F(4,3)", "F(6,3)", "F(8,3)"} <= tiles
    for e in entries[:8]:
        t = nova.catalogue_transform(e["tile"], e["preset"])
        assert t.verify() == (True, "")
        exact_g = [[Fraction(v) for v in row] for row in e["transform"]["G"]]
        assert [[Fraction(v) for v in row] for row in t.exact("G")] == exact_g
    with pytest.raises(ValueError, match="preset"):
        nova.catalogue_transform("4,3", "fp17")


def test_plans_warn_where_the_transform_makes_results_useless():
    """An ill-conditioned transform (a valid one: it verifies exactly) ran silently into useless or all-NaN
    outputs. The plan warns (RuntimeWarning, with the first-order prediction) and the output bears it out."""
    import warnings

    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 30, 30)).astype(np.float32)
    w = (0.1 * rng.standard_normal((4, 4, 3, 3))).astype(np.float32)
    want = direct(x[0].astype(np.float64), w.astype(np.float64))[None]
    y = np.empty((1, 4, 30, 30), np.float32)
    with pytest.warns(RuntimeWarning, match="predicted relative error in fp32 is"):
        plan = nova.ConvPlan((1, 4, 30, 30, 4), weights=w, transform=nova.Transform("10,3"))
    plan.execute(x, y)
    assert np.linalg.norm(y - want) / np.linalg.norm(want) > 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the shipped transforms: no warning
        for tile in ("2,3", "4,3", "6,3", "8,3"):
            nova.ConvPlan((1, 4, 30, 30, 4), weights=w, tile=tile).execute(x, y)
            assert np.linalg.norm(y - want) / np.linalg.norm(want) < 1e-4, tile


def test_misaligned_arrays_are_copied_not_refused_or_misread():
    """A numpy view at an odd byte offset: execute refused it as input ("aligned to 4 bytes") although a
    non-contiguous one is copied, and the plan read weights and calibration samples at any address. Inputs
    are copied into aligned storage now; the results equal those of aligned copies of the same values."""
    rng = np.random.default_rng(11)

    def misaligned(a):
        raw = np.zeros(a.nbytes + 1, np.uint8)[1:]  # one byte past an aligned start
        view = raw.view(a.dtype).reshape(a.shape)
        view[...] = a
        assert view.ctypes.data % a.itemsize != 0
        return view

    x = rng.standard_normal((1, 4, 9, 9)).astype(np.float32)
    w = (0.1 * rng.standard_normal((4, 4, 3, 3))).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for precision in ("fp32", "int8"):
        want, got = np.empty((1, 4, 9, 9), np.float32), np.empty((1, 4, 9, 9), np.float32)
        aligned = nova.ConvPlan((1, 4, 9, 9, 4), weights=w, bias=b, precision=precision, algorithm="winograd")
        shifted = nova.ConvPlan((1, 4, 9, 9, 4), weights=misaligned(w), bias=misaligned(b), precision=precision,
                                algorithm="winograd")
        if precision == "int8":
            aligned.calibrate([x])
            shifted.calibrate([misaligned(x)])
        aligned.execute(x, want)
        shifted.execute(misaligned(x), got)
        assert np.array_equal(got, want), precision
    # The output is written in place: a misaligned one is still refused.
    with pytest.raises(ValueError, match="aligned"):
        aligned.execute(x, misaligned(want))
