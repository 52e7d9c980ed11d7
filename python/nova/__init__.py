"""nova: exact Winograd (Cook-Toom) transforms and Winograd convolution that stays accurate in low precision.

Quick start::

    import nova
    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    ok, reason = t.verify()        # exact, in rational arithmetic
    t.AT, t.G, t.BT                # float64 numpy arrays, each entry the nearest double to the exact one
    t.exact("G")                   # exact entries as "p/q" strings

Analysis, error harness, discovery and the catalogue::

    nova.analyze(t)["matrices"]["V"]["1d"]["kappa2"]  # conditioning, norms, representability (a dict)
    nova.error(t, "fp16-storage", tiles=10000)       # vs a float64 direct convolution: rel_l2, NaN/Inf ...
    nova.error_layer(t, x, w, "int8-tap")            # on real activations x [N,C,H,W], weights w [K,C,r,r]
    t2, info = nova.discover("6,3", seed=1)          # points minimizing kappa_2(V), verified exactly
    nova.catalogue_transform("6,3", "fp16-storage")  # the best transform nova found for a preset

The convolution engine (plan once, execute many times on numpy arrays or torch tensors, no copies)::

    plan = nova.ConvPlan((N, C, H, W, K), weights=w, precision="bf16")      # w: float32 [K, C, 3, 3]
    plan.execute(x, y)                                                    # float32 NCHW in and out
    nova.ConvPlan(..., input_type="int8", input_scale=s_x, output_type="fp16")  # typed tensors
    plan.output_nonfinite, plan.v_shift   # last execute: NaN/Inf results held (low precision), fp16's V shift

The CUDA multi-pass path (fp16 storage, FP32 accumulation; docs/cuda.md)::

    nova.cuda_info()                                     # build, device, cuBLAS, and why not
    y, info = nova.cuda_emulate(x, w, tile=(6, 3))       # its passes on the host: the GPU's error, no GPU
    plan = nova.CudaConvPlan(x.shape, w); y = plan.execute(x); plan.stats   # on a GPU

Errors in the input (bad points, tiles, files, presets) raise ValueError with a one-line message.
"""

import os as _os

from . import _nova
from ._nova import (
    ConvPlan,
    CudaConvPlan,
    Transform,
    best_isa,
    cuda_emulate,
    cuda_info,
    default_transform,
    analyze,
    discover,
    error,
    error_layer,
    load_transform,
    loaded_openmp_runtimes,
    max_points,
    precision_model,
    precision_presets,
    share_openmp_threads,
    shared_openmp_library,
    stop_sharing_openmp_threads,
)

# The catalogue shipped inside the installed package (python/CMakeLists.txt installs it); when nova
# runs from a source tree instead, the C++ default (NOVA_CATALOGUE, else the tree's data/) applies.
_PACKAGED_CATALOGUE = _os.path.join(_os.path.dirname(__file__), "data", "catalogue.json")


def _catalogue_path(path: str) -> str:
    if path:
        return path
    if _os.environ.get("NOVA_CATALOGUE"):
        return ""
    return _PACKAGED_CATALOGUE if _os.path.exists(_PACKAGED_CATALOGUE) else ""


def catalogue_entries(path: str = "") -> list:
    """Every entry of the catalogue (default: the one shipped with nova) as dicts: tile, preset, exact
    transform, points, scaling choice, kappa_v, training and held-out errors, and how it was found."""
    return _nova.catalogue_entries(_catalogue_path(path))


def catalogue_transform(tile: str, preset: str, path: str = "") -> Transform:
    """The catalogue's verified transform for `tile` ("6,3") and precision preset ("fp16-storage");
    ValueError naming what the catalogue has otherwise."""
    return _nova.catalogue_transform(tile, preset, _catalogue_path(path))


__all__ = [
    "CudaConvPlan",
    "Transform",
    "analyze",
    "catalogue_entries",
    "catalogue_transform",
    "cuda_emulate",
    "cuda_info",
    "discover",
    "error",
    "error_layer",
    "load_transform",
    "loaded_openmp_runtimes",
    "max_points",
    "precision_model",
    "precision_presets",
    "share_openmp_threads",
    "shared_openmp_library",
    "stop_sharing_openmp_threads",
]
__version__ = "0.1.0"
