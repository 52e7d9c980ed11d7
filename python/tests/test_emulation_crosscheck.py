"""Two independent emulations of the precision presets agree on a real layer.

validation/winograd_ref.py (PyTorch, written from the presets' definitions) and nova's C++ error
harness (`nova.error_layer`) share no code. Both run Winograd under each preset on the exported
activations and weights of a trained network's layer and measure the relative L2 error of the output
against a float64 direct convolution. This is what validation/crosscheck.py prints as a table for the
docs; here the agreement is asserted.

With the same rounding points, the int8 presets quantize the same values to the same codes, so their
errors agree to four digits (the V scale taken over the batch, as nova's C++ presets do).
The floating-point presets differ only in the order of float32 sums, which moves the low-precision
errors (fp16, bf16) by a few percent and fp32's own error, made mostly of those sums, by tens of percent.
"""
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import crosscheck
import winograd_ref as wr

nova = pytest.importorskip("nova")

LAYER = Path(__file__).resolve().parents[2] / "validation" / "data" / "vgg_features.2"

# (tile, point set) as winograd_ref names them; nova gets the same points with the 'wincnn' scaling
# (winograd_ref's construction up to row signs, test_construction_matches_novas_exact_core_when_available).
SETS = [(4, "standard"), (6, "practitioners"), (6, "nova"), (8, "tvm")]
# Relative tolerance of nova's error against the emulation's, per preset.
# Measured on vgg_features.2 (nova / emulation), named sets and catalogue entries: int8 0.9998-1.0000
# on all 21 pairs; fp16-storage 0.93-1.00, fp16-all 0.86-0.99, bf16-storage 0.92-1.03 (fp32, 0.69-0.88,
# is left out: its error is mostly the order of the sums).
TOLERANCE = {"fp16-storage": 0.1, "fp16-all": 0.2, "bf16-storage": 0.1,
             "int8-tensor": 1e-3, "int8-channel": 1e-3, "int8-tap": 1e-3}


@pytest.fixture(scope="module")
def layer():
    x = torch.from_numpy(np.load(LAYER / "input.npy"))
    w = torch.from_numpy(np.load(LAYER / "weights.npy"))
    ref = F.conv2d(x.double(), w.double(), padding=w.shape[-1] // 2)
    return x, w, ref


def _expect_agreement(layer, mine, theirs, preset):
    """winograd_ref's error with transform `mine` against nova.error_layer's with `theirs` (the same
    matrices up to row signs), both against the float64 direct convolution of the layer."""
    x, w, ref = layer
    emulated = crosscheck.rel_l2(wr.winograd_conv2d(x, w, None, w.shape[-1] // 2, mine, preset, v_scale="batch"), ref)
    assert math.isfinite(emulated)
    got = nova.error_layer(theirs, x.double().numpy(), w.double().numpy(), preset)["winograd"]
    assert got["nan_count"] == 0 and got["inf_count"] == 0 and got["count"] == ref.numel()
    assert got["rel_l2"] == pytest.approx(emulated, rel=TOLERANCE[preset])


@pytest.mark.parametrize("m,name", SETS)
@pytest.mark.parametrize("preset", list(TOLERANCE))
def test_python_and_cpp_emulations_agree_on_a_real_layer(layer, m, name, preset):
    t = wr.point_set(m, 3, name)
    _expect_agreement(layer, t, nova.Transform(f"{m},3", t.points_str(), "wincnn"), preset)


@pytest.mark.parametrize("m", [4, 6, 8])
@pytest.mark.parametrize("preset", list(TOLERANCE))
def test_catalogue_entries_agree_on_a_real_layer(layer, m, preset):
    """The catalogue's entry for each tile and preset, with its own exact scaling: winograd_ref reads
    data/catalogue.json itself, nova through nova.catalogue_transform."""
    t = wr.point_set(m, 3, "catalogue", preset)
    theirs = nova.catalogue_transform(f"{m},3", preset)
    np.testing.assert_allclose(theirs.BT, np.array(t.mats()[2]), rtol=1e-15, atol=0)
    _expect_agreement(layer, t, theirs, preset)


def test_the_layer_is_the_exported_one_and_the_presets_order_as_expected(layer):
    """Guards the test above against data that would make it vacuous (all-zero or tiny layers)."""
    x, w, ref = layer
    assert x.shape[0] >= 8 and x.shape[1] == w.shape[1] >= 16 and float(ref.abs().max()) > 0
    t = nova.Transform("4,3", wr.point_set(4, 3, "standard").points_str(), "wincnn")
    e = {p: nova.error_layer(t, x.double().numpy(), w.double().numpy(), p)["winograd"]["rel_l2"]
         for p in ("fp64", "fp32", "fp16-storage", "int8-tap", "int8-tensor")}
    assert e["fp64"] < 1e-13 < e["fp32"] < 1e-5 < e["fp16-storage"] < e["int8-tap"] < e["int8-tensor"]
