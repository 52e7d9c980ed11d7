"""The CUDA multi-pass path from Python: its host emulation against PyTorch's float64 conv2d, bad input,
and the device plan against the emulation where a GPU is present."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import nova


def _layer(n, c, h, w, k, r=3, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    x = (rng.uniform(-1, 1, (n, c, h, w)) * scale).astype(np.float32)
    wt = rng.uniform(-0.1, 0.1, (k, c, r, r)).astype(np.float32)
    b = rng.uniform(-1, 1, k).astype(np.float32)
    return x, wt, b


def _reference(x, w, b, padding, relu=False):
    y = F.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), torch.from_numpy(b).double(),
                 padding=padding).numpy()
    return np.maximum(y, 0) if relu else y


def _rel(y, ref):
    return float(np.linalg.norm(y.astype(np.float64) - ref) / np.linalg.norm(ref))


def test_cuda_info_says_what_the_build_has():
    info = nova.cuda_info()
    assert set(info) >= {"built_with_cuda", "device_available", "why", "cublas_loadable"}
    if not info["device_available"]:
        assert info["why"]


@pytest.mark.parametrize("tile,r", [((2, 3), 3), ((4, 3), 3), ((6, 3), 3), ((8, 3), 3), ((4, 5), 5)])
def test_emulation_matches_float64_within_fp16_storage_error(tile, r):
    x, w, b = _layer(2, 7, 13, 11, 5, r=r, seed=tile[0])
    y, info = nova.cuda_emulate(x, w, b, tile=tile, relu=True)
    ref = _reference(x, w, b, r // 2, relu=True)
    assert y.shape == ref.shape and y.dtype == np.float32
    err = _rel(y, ref)
    # fp16 rounding of U and V (unit roundoff 2^-11) grows with the tile: well above FP32's, below a few %
    assert 1e-5 < err < {2: 2e-3, 4: 5e-3, 6: 2e-2, 8: 5e-2}[tile[0]]
    assert info["tile"] == f"F({tile[0]},{tile[1]})" and info["output_nonfinite"] == 0 and info["v_shift"] == 0


def test_emulation_shifts_small_inputs_up_and_keeps_their_error():
    x, w, b = _layer(1, 8, 12, 12, 4, seed=3)
    zero = np.zeros_like(b)
    y1, i1 = nova.cuda_emulate(x, w, zero)
    ys, is_ = nova.cuda_emulate(x * np.float32(2.0**-30), w, zero)
    assert i1["v_shift"] == 0 and is_["v_shift"] < -20
    ref = _reference(x, w, zero, 1)
    assert _rel(ys * 2.0**30, ref) < 1.1 * _rel(y1, ref)


def test_emulation_counts_nan_inputs():
    x, w, b = _layer(1, 2, 8, 8, 3, seed=4)
    x[0, 1, 3, 3] = np.nan
    y, info = nova.cuda_emulate(x, w, b)
    assert np.isnan(info["input_amax"]) and info["output_nonfinite"] == int(np.sum(~np.isfinite(y))) > 0


@pytest.mark.parametrize("io,dtype", [("fp16", torch.float16), ("bf16", torch.bfloat16)])
def test_tensor_types_round_only_at_the_boundary(io, dtype):
    # A plan on fp16 / bf16 tensors computes as the FP32 one on the input rounded to the type, and rounds
    # its output to the type: checked bit for bit with PyTorch's own rounding.
    x, w, b = _layer(1, 6, 11, 12, 5, seed=6)
    y, info = nova.cuda_emulate(x, w, b, input_type=io, output_type=io)
    x_rounded = torch.from_numpy(x).to(dtype).float().numpy()
    want, _ = nova.cuda_emulate(x_rounded, w, b)
    want = torch.from_numpy(want).to(dtype).float().numpy()
    assert np.array_equal(y, want)
    assert info["input_type"] == io and info["output_type"] == io
    with pytest.raises(ValueError, match="fp32, fp16 or bf16"):
        nova.cuda_emulate(x, w, b, output_type="int8")


def test_bad_input_raises_value_error():
    x, w, b = _layer(1, 4, 8, 8, 3)
    with pytest.raises(ValueError, match="input channels"):
        nova.cuda_emulate(x[:, :3], w, b)
    with pytest.raises(ValueError, match="is for 5x5 kernels"):
        nova.cuda_emulate(x, w, b, tile=(4, 5))
    w_nan = w.copy()
    w_nan[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="weights contain NaN"):
        nova.cuda_emulate(x, w_nan, b)
    with pytest.raises(ValueError, match="bias holds 2 values"):
        nova.cuda_emulate(x, w, b[:2])


def test_device_plan_runs_the_emulated_passes_or_says_why_not():
    x, w, b = _layer(2, 16, 20, 18, 24, seed=5)
    info = nova.cuda_info()
    if not info["device_available"]:
        with pytest.raises(ValueError, match=info["why"][:20]):
            nova.CudaConvPlan(x.shape, w, b)
        pytest.skip(info["why"])
    plan = nova.CudaConvPlan(x.shape, w, b, tile=(6, 3))
    y = plan.execute(x)
    emulated, einfo = nova.cuda_emulate(x, w, b, tile=(6, 3))
    ref = _reference(x, w, b, 1)
    assert plan.stats["v_shift"] == einfo["v_shift"] and plan.stats["output_nonfinite"] == 0
    assert _rel(y, emulated.astype(np.float64)) < _rel(emulated, ref) / 2
    assert len(plan.time_executes(x, 3)) == 3
