"""nova's catalogue entries in the validation's emulation (validation/winograd_ref.py): the exact matrices
are read from data/catalogue.json (not re-derived), verified exactly, and checked against independent
references: rational arithmetic on random data, the Cook-Toom construction of the entry's points,
float64 direct convolution, and nova's own exact core when the package imports."""
import copy
import json
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import winograd_ref as wr

DOC = wr.load_catalogue()
ENTRIES = [(e["tile"], e["preset"]) for e in DOC["entries"]]
EVAL_TILES = [(4, 3), (6, 3), (7, 3), (8, 3)]


def _mr(tile):
    m, r = tile[2:-1].split(",")
    return int(m), int(r)


def _entry(tile, preset):
    return next(e for e in DOC["entries"] if e["tile"] == tile and e["preset"] == preset)


def test_catalogue_covers_the_validation_grid():
    for m, r in EVAL_TILES:
        for preset in wr.EVAL_PRESETS:
            assert (f"F({m},{r})", preset) in ENTRIES


@pytest.mark.parametrize("tile,preset", ENTRIES)
def test_catalogue_entry_is_read_exactly_and_is_exact_correlation(tile, preset):
    m, r = _mr(tile)
    e = _entry(tile, preset)
    t = wr.point_set(m, r, "catalogue", preset)  # verify() and the scaling check run inside
    assert t.name == "catalogue" and t.origin["preset"] == preset
    # the matrices are the JSON's, entry for entry (read, not re-derived)
    for key, M in (("AT", t.AT), ("G", t.G), ("BT", t.BT)):
        assert M == [[Fraction(x) for x in row] for row in e["transform"][key]]
        # the JSON's float64 copy is the nearest double of each exact entry
        np.testing.assert_array_equal(np.array(e["transform"]["float64"][key]), np.array(t.mats()[["AT", "G", "BT"].index(key)]))
    assert [str(p) for p in t.points] == [str(p) for p in wr.parse_points(e["points"])]
    # independent of verify(): random rational data through the exact matrices equals direct correlation
    rng = np.random.default_rng(len(ENTRIES) + m * 10 + r)
    d = [Fraction(int(v), 7) for v in rng.integers(-60, 60, t.n)]
    g = [Fraction(int(v), 5) for v in rng.integers(-60, 60, r)]
    Gg = [sum(t.G[a][k] * g[k] for k in range(r)) for a in range(t.n)]
    Bd = [sum(t.BT[a][i] * d[i] for i in range(t.n)) for a in range(t.n)]
    y = [sum(t.AT[o][a] * Gg[a] * Bd[a] for a in range(t.n)) for o in range(m)]
    assert y == [sum(d[o + k] * g[k] for k in range(r)) for o in range(m)]


@pytest.mark.parametrize("m,r", EVAL_TILES)
def test_catalogue_matrices_are_cook_toom_of_their_points_times_the_recorded_scaling(m, r):
    """Rebuild each entry from its points alone (Cook-Toom in Fractions) and the recorded D1, D2."""
    for preset in wr.EVAL_PRESETS:
        e = _entry(f"F({m},{r})", preset)
        t = wr.catalogue_transform(m, r, preset)
        ct = wr.cook_toom(m, r, e["points"])
        pts = wr.parse_points(e["points"])
        finite = [p for p in pts if p != wr.INF]
        D1 = [Fraction(x) for x in e["transform"]["scaling"]["D1"]]
        D2 = [Fraction(x) for x in e["transform"]["scaling"]["D2"]]
        for a, f in enumerate(pts):
            Nf = Fraction(1)
            for q in finite:
                if f != wr.INF and q != f:
                    Nf *= f - q
            c, gfac = D1[a], D2[a] * Nf  # wincnn's G row carries 1/N_f: G = D2 * G_lagrange = D2 * N_f * G_wincnn
            assert [t.AT[i][a] for i in range(m)] == [c * ct.AT[i][a] for i in range(m)]
            assert t.G[a] == [gfac * x for x in ct.G[a]]
            assert t.BT[a] == [x / (c * gfac) for x in ct.BT[a]]


def test_corrupted_catalogue_entries_are_rejected(tmp_path):
    doc = copy.deepcopy(DOC)
    e = next(x for x in doc["entries"] if x["tile"] == "F(6,3)" and x["preset"] == "fp16-storage")
    bad = copy.deepcopy(e["transform"])
    bad["BT"][3][2] = str(Fraction(bad["BT"][3][2]) + Fraction(1, 1024))
    with pytest.raises(ValueError, match="not exact"):
        wr.transform_from_json(bad)
    bad = copy.deepcopy(e["transform"])
    bad["scaling"]["D2"][2] = str(2 * Fraction(bad["scaling"]["D2"][2]))
    with pytest.raises(ValueError, match="recorded scaling"):
        wr.transform_from_json(bad)
    # an exact transform of other points than the ones it names
    bad = copy.deepcopy(e["transform"])
    bad["points"] = ["0", "1", "-1", "2", "-2", "3", "-3", "inf"]
    with pytest.raises(ValueError, match="not a multiple"):
        wr.transform_from_json(bad)
    p = tmp_path / "cat.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="0 entries"):
        wr.catalogue_entry(6, 3, "fp8", p)
    with pytest.raises(ValueError, match="needs a preset"):
        wr.point_set(6, 3, "catalogue")
    with pytest.raises(FileNotFoundError, match="catalogue"):
        wr.catalogue_path(tmp_path / "missing.json")


@pytest.mark.parametrize("m,r", EVAL_TILES)
def test_catalogue_fp64_winograd_equals_float64_direct_conv(m, r):
    g = torch.Generator().manual_seed(m)
    x = torch.randn(2, 5, 17, 13, generator=g, dtype=torch.float64)
    w = torch.randn(6, 5, r, r, generator=g, dtype=torch.float64)
    b = torch.randn(6, generator=g, dtype=torch.float64)
    ref = F.conv2d(x, w, b, padding=1)
    for preset in ("fp16-storage", "int8-tap"):
        y = wr.winograd_conv2d(x, w, b, 1, wr.point_set(m, r, "catalogue", preset), "fp64")
        assert ((y - ref).norm() / ref.norm()).item() < 1e-9


def _nova():
    try:
        import nova  # noqa: F401
        return nova
    except ImportError:
        return None


@pytest.mark.skipif(_nova() is None, reason="the nova package does not import (build it: scripts/python-tests.sh)")
@pytest.mark.parametrize("m,r", EVAL_TILES)
def test_catalogue_matrices_equal_novas_own_exact_core(m, r):
    """nova parses the entry's JSON, and constructs the points under the recorded scaling itself:
    both give exactly the matrices the emulation read with json + fractions."""
    nova = _nova()
    for preset in wr.EVAL_PRESETS:
        e = _entry(f"F({m},{r})", preset)
        t = wr.catalogue_transform(m, r, preset)
        sc = e["transform"]["scaling"]
        built = nova.Transform(f"{m},{r}", ",".join(e["points"]),
                               "d1=" + ",".join(sc["D1"]) + ";d2=" + ",".join(sc["D2"]))
        parsed = nova.Transform.from_json(json.dumps(e["transform"]))
        for nt in (built, parsed):
            assert nt.verify()[0]
            for key, M in (("AT", t.AT), ("G", t.G), ("BT", t.BT)):
                assert [[Fraction(x) for x in row] for row in nt.exact(key)] == M
            np.testing.assert_array_equal(nt.G, t.mats()[1])
        if hasattr(nova, "catalogue_transform"):  # the package's own catalogue call, where it has one
            ct = nova.catalogue_transform(f"{m},{r}", preset)
            for key, M in (("AT", t.AT), ("G", t.G), ("BT", t.BT)):
                assert [[Fraction(x) for x in row] for row in ct.exact(key)] == M


# ---------------------------------------------------------------------------------------------
# the INT8 V-scale definitions
# ---------------------------------------------------------------------------------------------
def _case(seed, N=3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, 4, 12, 12, generator=g)
    w = torch.randn(5, 4, 3, 3, generator=g)
    return x, w


@pytest.mark.parametrize("preset", ["int8-tensor", "int8-channel", "int8-tap"])
def test_int8_v_scale_image_is_batch_independent_and_equals_batch_at_size_one(preset):
    x, w = _case(1)
    x[1] *= 50  # one loud image in the batch
    t = wr.point_set(4, 3, "catalogue", preset)
    per_img = wr.winograd_conv2d(x, w, None, 1, t, preset, v_scale="image")
    for i in range(x.shape[0]):
        one = x[i:i + 1]
        yi = wr.winograd_conv2d(one, w, None, 1, t, preset, v_scale="image")
        yb = wr.winograd_conv2d(one, w, None, 1, t, preset, v_scale="batch")
        torch.testing.assert_close(yb, yi, rtol=0, atol=0)      # same definition at batch size 1
        torch.testing.assert_close(per_img[i:i + 1], yi, rtol=1e-6, atol=1e-6)  # independent of the batch
    # per tensor over the batch: the quiet images share the loud image's scale and lose precision
    batch = wr.winograd_conv2d(x, w, None, 1, t, preset, v_scale="batch")
    ref = F.conv2d(x.double(), w.double(), padding=1)
    err = lambda y, i: ((y[i].double() - ref[i]).norm() / ref[i].norm()).item()
    assert err(batch, 0) > 3 * err(per_img, 0)
    assert err(batch, 1) == pytest.approx(err(per_img, 1), rel=1e-5)  # the loud image sets the batch's scale


@pytest.mark.parametrize("v_scale", wr.V_SCALES)
def test_int8_v_scale_plumbing_converges_with_fine_quantization(v_scale, monkeypatch):
    """With 2^20 levels instead of 127, both definitions approach the float64 direct convolution."""
    monkeypatch.setattr(wr, "INT8_QMAX", 2 ** 20)
    x, w = _case(2)
    ref = F.conv2d(x.double(), w.double(), padding=1)
    for preset in ("int8-tensor", "int8-channel", "int8-tap"):
        y = wr.winograd_conv2d(x, w, None, 1, wr.point_set(6, 3, "catalogue", preset), preset, v_scale=v_scale)
        assert ((y.double() - ref).norm() / ref.norm()).item() < 1e-4


def test_unknown_v_scale_is_rejected():
    x, w = _case(3, N=1)
    with pytest.raises(ValueError, match="v_scale"):
        wr.winograd_conv2d(x, w, None, 1, wr.point_set(4, 3, "standard"), "int8-tensor", v_scale="channel")
