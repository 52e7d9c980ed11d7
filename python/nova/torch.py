"""PyTorch drop-in: Winograd convolution through nova's engine.

    import nova.torch as nt
    report = nt.replace_conv2d(model, tile="6,3")   # every eligible Conv2d, in place
    print(report)                                    # what was replaced, what was not, and why

Eligible layers: 3x3 or 5x5 kernels, stride 1, dilation 1, groups 1, any padding mode (reflect,
replicate and circular padding applied by F.pad before a convolution without padding, as nn.Conv2d does).
Others are left as they are and listed in the report with the reason, or, with
``replace_conv2d(model, direct=True)`` (float32), put on nova's direct path as NovaConv2d layers (strides,
groups and depthwise, dilation, any kernel size; one stride and one dilation for both axes). The forward pass runs on CPU float32, float16 or
bfloat16 tensors (the output has the input's type; the engine widens the input exactly, computes from
FP32 values and rounds the output once; half-precision weights are widened to FP32 too) through
nova's engine (registered as the custom operator ``nova::winograd_conv2d`` so that
``torch.compile(fullgraph=True)`` traces through it); the backward pass uses PyTorch's own convolution
gradients. Filters are transformed once per plan and again whenever the weights change (tracked through
the tensors' version counters, and, for writes through ``weight.data``, which bypass the parameter's
counter, through a fingerprint of 16 sampled words of their memory: whole-tensor writes such as
``p.data.add_(-lr * p.grad)`` are seen, a write that changes only some elements through ``.data`` (a
pruning mask, a ``copy_`` that differs in a few places) may not be; write under ``torch.no_grad()``, or
call ``weights_changed(model)`` after such a write). ``WinogradConv2d`` keeps
``weight`` and ``bias`` as parameters with the same names, so state_dicts move freely between the original
and the converted model. Unbatched (C, H, W) inputs and empty batches are taken as nn.Conv2d takes them;
float64 tensors (a converted model moved to float64, say for a reference) run through PyTorch's own
convolution, which keeps their precision, as the engine's FP32 would not; so do the layers under torch.func
transforms (grad, vmap, jacrev), in which PyTorch's custom operators cannot take part.
Under ``torch.autocast("cpu")`` the layers return the autocast type (bfloat16 or float16), as nn.Conv2d
does; WinogradConv2d takes its input in that type, NovaConv2d computes in FP32 and rounds its output to it,
and both keep the weights as they are (the engine computes from their FP32 values, where nn.Conv2d rounds
them too). WinogradConv2d's input and weights may be of different types (say a bfloat16 input with float32
weights, which nn.Conv2d refuses); the gradients are then computed in the wider type and returned in each
tensor's own.

Importing this module puts nova's parallel stages on PyTorch's OpenMP threads (``share_pytorch_threads``;
``NOVA_SHARE_OPENMP=0`` keeps nova's own), and the layers' plans choose their tiles as layers of a network
(``filters_from_memory``). Both are measured in docs/engine-log.md, "Session 24".
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import threading
import warnings
from collections import OrderedDict
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import _nova

__all__ = ["WinogradConv2d", "NovaConv2d", "replace_conv2d", "ReplacementReport", "winograd_conv2d", "conv2d",
           "profile", "openmp_spin_note", "share_pytorch_threads", "weights_changed"]


def _pytorch_openmp_library() -> str:
    """Path of the OpenMP runtime PyTorch's operations run on, or "" when PyTorch runs on another
    backend or the runtime cannot be told apart from others in the process."""
    if "ATen parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return ""
    runtimes = _nova.loaded_openmp_runtimes()
    torch_dir = os.path.dirname(os.path.realpath(torch.__file__)) + os.sep
    own = [p for p in runtimes if os.path.realpath(p).startswith(torch_dir)]
    if len(own) == 1:
        return own[0]
    return runtimes[0] if len(runtimes) == 1 else ""


def share_pytorch_threads(share: bool = True) -> str:
    """Run nova's parallel stages on PyTorch's OpenMP threads (``share=True``, what importing nova.torch
    does unless NOVA_SHARE_OPENMP=0) or on nova's own (``False``). Returns the path of the runtime now
    shared, or "" when nova runs on its own threads (PyTorch not on OpenMP, or its runtime not found).

    Why: after each parallel operation PyTorch's OpenMP threads spin-wait (GOMP_SPINCOUNT, 300,000
    iterations by default) on the cores nova's own threads need next, so a network that alternates
    PyTorch's operations with nova's layers runs both on fewer cores than it has. On PyTorch's threads
    nova's layers take the spinning threads' cores instead of competing for them. Measured on the
    development machine (2 cores, bench/network_speed.py, session 24, two runs): VGG-16 through the
    drop-in 122-126 -> 93-94 ms a forward (NCHW) and 107-113 -> 72-76 (channels_last), ResNet-18 28-30 ->
    24 ms and 25-29 -> 19-20. The results are the same bits either way."""
    if not share:
        _nova.stop_sharing_openmp_threads()
        return ""
    library = _pytorch_openmp_library()
    if library:
        _nova.share_openmp_threads(library)
    return _nova.shared_openmp_library()


def _share_setting() -> bool:
    value = os.environ.get("NOVA_SHARE_OPENMP", "1")
    if value not in ("0", "1"):
        raise ValueError(f"NOVA_SHARE_OPENMP must be 0 or 1, got {value!r}")
    return value == "1"


if _share_setting():
    share_pytorch_threads()

# The plans of nova's operators, shared by every layer and call: key -> _CachedPlan. The layers' eager
# forward keeps its own last plan besides (_LastPlan), so a network's inference does not depend on this
# cache's size; its operator path (autograd, torch.compile) does: with 64 entries, a network of more than
# 64 convolutions made every plan again on every call (70 layers of 32 channels on 28x28: 47 ms a forward
# against 8 at 60 layers, session 29), hence 512. A plan whose weights or bias changed (a new version
# of the same tensors) replaces the older plans of that layer, so training does not fill it with stale ones.
_PLAN_CACHE_SIZE = 512
_plans: "OrderedDict[tuple, _CachedPlan]" = OrderedDict()
# Guards _plans (and _profiled's insertions) for models run from several Python threads: a lookup and its
# move_to_end, or an insertion and the eviction, must not interleave with another thread's.
_plans_lock = threading.Lock()
atexit.register(_plans.clear)  # release the engine's plans before the extension module goes away
# Inside profile(): the plans used so far in the block, in order of first use (id -> (key, plan)); each
# times its stages (ConvPlan.set_profiling). None outside.
_profiled: "Optional[OrderedDict[int, tuple]]" = None


def _memory_span(t: torch.Tensor) -> tuple:
    """(address, bytes) of the memory a CPU tensor's elements lie in, from its first to its last element."""
    if t.numel() == 0:
        return 0, 0
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return t.data_ptr(), (last + 1) * t.element_size()


class _CachedPlan:
    """A plan and the weight and bias tensors it was made from (for the shared cache, and the base of a
    layer's _LastPlan). Holding them keeps their storage alive, so
    no other tensor can be given their address while the plan is cached: a key that matches (address,
    shape, strides and version counter) is then these tensors, unchanged since. Without them a model made
    after another was freed could get the freed model's plans: its weights at the same address, at the
    same version after the same load_state_dict (session 29: a relative error of 1.4, silently).
    The version counter misses writes through ``weight.data`` (a tensor with a counter of its own), such as
    the manual SGD step ``p.data.add_(-lr * p.grad)``: the plan also keeps a fingerprint of the tensors'
    memory (16 sampled words each, _nova._memory_fingerprint), and ``unchanged()`` compares it, so a
    write that changes any sampled word (every whole-tensor write) makes a new plan."""
    __slots__ = ("plan", "tensors", "regions", "fingerprint")

    def __init__(self, plan, weight: torch.Tensor, bias: Optional[torch.Tensor]):
        self.plan = plan
        self.tensors = (weight.detach(), None if bias is None else bias.detach())
        self.regions = _memory_span(weight) + ((0, 0) if bias is None else _memory_span(bias))
        self.fingerprint = _nova._memory_fingerprint(*self.regions)

    def unchanged(self) -> bool:
        return _nova._memory_fingerprint(*self.regions) == self.fingerprint


# A _plan_for key ends with the weight's and the bias's version counters; what precedes them is the layer,
# whatever the state of its tensors.
_VERSIONS = 2
# The place of the weight's address in a _plan_for key (weights_changed drops a model's plans by it).
_KEY_WEIGHT_PTR = 3


def _profile_use(key, plan):
    if _profiled is not None and id(plan) not in _profiled:
        plan.set_profiling(True)
        _profiled[id(plan)] = (key, plan)


# precision= of the drop-in: the engine's GEMM types and the error-harness presets they implement.
# fp16 carries the GEMM arithmetic after a colon: "fp16" lets the engine choose (fp16 FMAs where the CPU
# has AVX512-FP16, the fp16-fma preset; FP32 arithmetic otherwise), the presets force theirs.
_ENGINE_PRECISION = {
    "fp32": "fp32",
    "bf16": "bf16", "bf16-storage": "bf16", "bf16-fma": "bf16:fma", "bf16-dot": "bf16:dot",
    "fp16": "fp16", "fp16-storage": "fp16:fp32", "fp16-fma": "fp16:fp16",
    "int8": "int8", "int8-tap-channel": "int8",
    "int8-spatial": "int8-spatial",
}
# The catalogue preset whose transform a low-precision layer uses when none is given.
_CATALOGUE_PRESET = {"fp32": "fp32", "bf16": "bf16-storage", "fp16": "fp16-storage", "int8": "int8-tap"}


# Tensor types the engine reads and writes directly (its input/output types).
_IO_TYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def _engine_precision(precision: str) -> str:
    try:
        return _ENGINE_PRECISION[precision]
    except KeyError:
        raise ValueError(f"precision '{precision}' is not one the engine runs; choose one of "
                         f"{', '.join(_ENGINE_PRECISION)} (other presets: validation/winograd_ref.py emulates "
                         "them)") from None


def _plan_for(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], padding, tile: str,
              transform_json: str, threads: int, precision: str = "fp32", lowp_kernel: str = "auto",
              layout: str = "nchw", stride: int = 1, dilation: int = 1, groups: int = 1):
    """A cached engine plan; the key includes the weights' identity and version, so an in-place update
    of the weights (an optimizer step, load_state_dict) makes a new plan with freshly transformed filters.
    threads 0 follows PyTorch's intra-op thread count (torch.set_num_threads), read at each call."""
    if len(padding) != 2:
        raise ValueError(f"padding must be two values (rows, columns), got {list(padding)}")
    if threads == 0:
        threads = torch.get_num_threads()
    key = (tuple(x.shape), x.dtype, weight.dtype, weight.data_ptr(), tuple(weight.shape), weight.stride(),
           None if bias is None else (bias.data_ptr(), bias.stride()), tuple(padding), tile, transform_json,
           threads, precision, lowp_kernel, layout, stride, dilation, groups,
           weight._version, None if bias is None else bias._version)
    with _plans_lock:
        cached = _plans.get(key)
        if cached is not None and cached.unchanged():
            _plans.move_to_end(key)
            _profile_use(key, cached.plan)
            return cached.plan
    n, c, h, w = x.shape
    k, _, r, s = weight.shape
    transform = _nova.Transform.from_json(transform_json) if transform_json else None
    w32 = weight.detach().float().resolve_neg().contiguous()  # exact for float16 / bfloat16 weights
    b32 = None if bias is None else bias.detach().float().resolve_neg().contiguous()
    io = _IO_TYPES[x.dtype]
    engine, _, arithmetic = precision.partition(":")
    plan = _nova.ConvPlan((n, c, h, w, k), kernel=(r, s), padding=tuple(padding), stride=stride, dilation=dilation,
                          groups=groups, weights=w32, bias=b32, threads=threads, tile=tile, transform=transform, precision=engine,
                          fp16_arithmetic=(arithmetic or "auto") if engine == "fp16" else "auto",
                          bf16_arithmetic=(arithmetic or "auto") if engine == "bf16" else "auto",
                          input_type=io, output_type=io, lowp_kernel=lowp_kernel, layout=layout,
                          filters_from_memory=True)  # a layer of a network: its filters leave the caches
    with _plans_lock:  # two threads may have made the same plan: the later one is kept, both are correct
        _profile_use(key, plan)
        layer = key[:-_VERSIONS]
        for old in [k for k in _plans if k != key and k[:-_VERSIONS] == layer]:
            del _plans[old]  # the same layer at another version of its weights or bias
        _plans[key] = _CachedPlan(plan, weight, bias)
        while len(_plans) > _PLAN_CACHE_SIZE:
            _plans.popitem(last=False)
    return plan


@contextlib.contextmanager
def profile():
    """Where nova's layers spend their time: inside the block, the engine's plans time their stages
    (``ConvPlan.set_profiling``); on exit the yielded list holds one dict per plan that ran, in the
    order of first use: ``layer`` (N, C, H, W, K), ``algorithm``, ``tile``, ``precision``, ``gemm_path``,
    ``threads``, and ``ConvPlan.stage_profile()``'s figures (executes, wall_ms, pack_ms, scales_ms,
    input_ms, convert_ms, gemm_ms, output_ms, direct_ms, idle_ms: thread time summed over threads and
    executes). Profiling reads the clock a few times per block of tiles; time with it off::

        with nova.torch.profile() as layers:
            model(x)
        for p in layers:
            print(p["layer"], p["tile"], p["gemm_ms"] / p["executes"])
    """
    global _profiled
    if _profiled is not None:
        raise RuntimeError("nova.torch.profile() blocks do not nest")
    _profiled = OrderedDict()
    results: list = []
    try:
        yield results
    finally:
        used, _profiled = _profiled, None
        for key, plan in used.values():
            p = plan.stage_profile()
            plan.set_profiling(False)
            if p["executes"] == 0:
                continue
            n, c, h, w = key[0]
            k = key[4][0]
            results.append({"layer": (n, c, h, w, k), "algorithm": plan.algorithm, "tile": plan.tile,
                            "precision": plan.precision, "gemm_path": plan.gemm_path, **p})


def _check_input(x: torch.Tensor, weight: torch.Tensor, groups: int = 1):
    if x.device.type != "cpu" or weight.device.type != "cpu":
        raise ValueError(f"nova's engine runs on CPU tensors; got input on {x.device}, weight on {weight.device}")
    if x.dtype not in _IO_TYPES or weight.dtype not in _IO_TYPES:
        raise ValueError(f"nova's engine takes float32, float16 or bfloat16 tensors; got input {x.dtype}, "
                         f"weight {weight.dtype}")
    if x.dim() != 4:
        raise ValueError(f"expected a 4D NCHW input (or an unbatched 3D CHW one), got shape {tuple(x.shape)}")
    if weight.dim() != 4:
        raise ValueError(f"expected 4D weights (K, C / groups, R, S), got shape {tuple(weight.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"groups must be an int of at least 1, got {groups!r}")
    if x.shape[1] != weight.shape[1] * groups:
        raise ValueError(f"input has {x.shape[1]} channels, the layer expects {weight.shape[1] * groups}")


@torch.library.custom_op("nova::winograd_conv2d", mutates_args=())
def winograd_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], padding: list[int],
                    tile: str, transform_json: str, threads: int, precision: str = "fp32",
                    lowp_kernel: str = "auto") -> torch.Tensor:
    """Stride-1, dilation-1 conv2d (cross-correlation, CPU) through nova's Winograd engine on NCHW tensors, or on
    channels_last ones in place (the engine's NHWC layout; the output is channels_last too); the input
    is float32, float16 or bfloat16 and the output has its type; ``precision`` (fp32, bf16, fp16, int8) is
    the type of the engine's Winograd-domain GEMMs, ``lowp_kernel`` the kernel of those GEMMs (auto,
    portable, simd, avx512: never AMX, amx; nova.ConvPlan)."""
    return _winograd_conv2d_eager(x, weight, bias, padding, tile, transform_json, threads, precision, lowp_kernel)


def _winograd_conv2d_eager(x, weight, bias, padding, tile, transform_json, threads, precision, lowp_kernel):
    """The body of nova::winograd_conv2d."""
    plan, nhwc = _winograd_plan(x, weight, bias, padding, tile, transform_json, threads, precision, lowp_kernel)
    return _execute(plan, x, _empty_output(x, weight, padding), nhwc)


def _winograd_plan(x, weight, bias, padding, tile, transform_json, threads, precision, lowp_kernel):
    """The checked input's plan and whether it runs on NHWC (a channels_last x, in place)."""
    _check_input(x, weight)
    nhwc = _channels_last(x)
    return _plan_for(x, weight, bias, padding, tile, transform_json, threads, precision, lowp_kernel,
                     "nhwc" if nhwc else "nchw"), nhwc


def _execute(plan, x: torch.Tensor, out: torch.Tensor, nhwc: bool) -> torch.Tensor:
    """Runs plan from x into out: on NHWC the engine's layout on the tensors' own channels_last memory."""
    if x.requires_grad:  # under no_grad (the layers' eager forward): DLPack does not export such tensors
        x = x.detach()
    # A negative view (torch._neg_view, conj().imag) keeps its sign in a flag that DLPack does not carry:
    # the engine read the values without it (relative error 2). resolve_neg() is x itself when not one.
    x = x.resolve_neg()
    if nhwc:
        plan.execute(x.permute(0, 2, 3, 1), out.permute(0, 2, 3, 1))
    else:
        plan.execute(x.contiguous(), out)
    return out


class _LastPlan(_CachedPlan):
    """A layer's plan for the input it saw last, kept by the layer for its eager forward (_eager_call_ok):
    a call on an input like the last one (same key) runs it at once, without the checks, the output's
    shape, the shared cache's key and lock (Python around the engine's execute: medians 37-43 µs a call
    before, 22-29 after; MobileNetV2 channels_last 0.81 of the time; session 29), and a network keeps one
    plan per layer however many layers it has. As a _CachedPlan it holds the weight and bias, so no other
    tensor can be given their address while it lives."""
    __slots__ = ("key", "nhwc", "out_size")

    def __init__(self, key: tuple, plan, nhwc: bool, out_size: torch.Size, weight, bias):
        super().__init__(plan, weight, bias)
        self.key, self.nhwc, self.out_size = key, nhwc, out_size

    def run(self, x: torch.Tensor) -> torch.Tensor:
        fmt = torch.channels_last if self.nhwc else torch.contiguous_format
        out = torch.empty(self.out_size, dtype=x.dtype, memory_format=fmt)
        return _execute(self.plan, x, out, self.nhwc)


def _last_plan_key(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], threads: int,
                   layer: tuple) -> tuple:
    """What a layer's last plan depends on: the input's shape, type, device and layout, the weight's and
    bias's address, shape, strides and version counter, the thread count and the layer's settings."""
    return (x.shape, x.dtype, x.device, _channels_last(x), weight.data_ptr(), weight._version, weight.shape,
            weight.stride(), None if bias is None else (bias.data_ptr(), bias._version, bias.stride()),
            threads, layer)


def _eager_call_checks():
    """The PyTorch predicates _eager_call_ok needs (private ones among them), or None where this PyTorch
    lacks one: then every call goes through the operator, which is always correct."""
    try:
        return (torch.compiler.is_compiling, torch.jit.is_tracing, torch._C._len_torch_dispatch_stack,
                torch._C._is_torch_function_mode_enabled, torch._C._functorch.peek_interpreter_stack,
                torch._C._autograd._profiler_enabled)
    except AttributeError:
        return None


_EAGER_CHECKS = _eager_call_checks()


def _under_torch_func() -> bool:
    """Whether a torch.func transform (grad, vmap, jacrev, ...) is active. PyTorch's custom operators take
    part in none with their autograd ("an autograd.Function ... must override the setup_context
    staticmethod", even for a minimal custom_op), and vmap runs them image by image: the layers then
    compute with PyTorch's own convolution, which takes part in all of them."""
    stack = getattr(torch._C._functorch, "peek_interpreter_stack", None)
    # Not while torch.compile traces: there it answers non-None (PyTorch 2.15) with no transform active.
    return stack is not None and not torch.compiler.is_compiling() and stack() is not None


def _eager_call_ok(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor]) -> bool:
    """Whether a layer may call its operator's body directly instead of through the PyTorch dispatcher.

    The custom operator is what autograd, torch.compile / export, tracing, vmap, dispatch modes (fake
    tensors, FLOP counters) and the profiler see, but each call through it costs tens of microseconds of
    Python dispatch, more inside a network, where that code runs with cold caches between kernels:
    ResNeXt-50 through the drop-in (direct=True, 2 threads) ran its forward in 0.80-0.95 of the time with
    the body called directly (docs/engine.md, session 28). So the body is called directly only where none
    of those is active and no gradient is being recorded: inference under no_grad or inference_mode, or
    on tensors that do not require grad."""
    if _EAGER_CHECKS is None:
        return False
    if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or
                                    (bias is not None and bias.requires_grad)):
        return False
    compiling, tracing, dispatch_modes, function_modes, functorch_stack, profiling = _EAGER_CHECKS
    return (type(x) is torch.Tensor and not compiling() and not tracing() and dispatch_modes() == 0
            and not function_modes() and functorch_stack() is None and not profiling())


def _channels_last(x: torch.Tensor) -> bool:
    """Whether x is laid out channels_last (NHWC memory) and not also plain NCHW (one channel or pixel)."""
    return not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)


def _output_size(x: torch.Tensor, weight: torch.Tensor, padding, stride: int = 1, dilation: int = 1) -> torch.Size:
    n, _, h, w = x.shape
    k, _, r, s = weight.shape
    oh = (h + 2 * padding[0] - dilation * (r - 1) - 1) // stride + 1
    ow = (w + 2 * padding[1] - dilation * (s - 1) - 1) // stride + 1
    return torch.Size((n, k, oh, ow))


def _empty_output(x: torch.Tensor, weight: torch.Tensor, padding, stride: int = 1, dilation: int = 1) -> torch.Tensor:
    """The operator's output, uninitialized: x's type and device, channels_last where x is (the real
    operators and their fakes for torch.compile all allocate it here)."""
    fmt = torch.channels_last if _channels_last(x) else torch.contiguous_format
    return torch.empty(_output_size(x, weight, padding, stride, dilation), dtype=x.dtype, device=x.device,
                       memory_format=fmt)


@winograd_conv2d.register_fake
def _(x, weight, bias, padding, tile, transform_json, threads, precision="fp32", lowp_kernel="auto"):
    return _empty_output(x, weight, padding)


def _setup_context(ctx, inputs, output):
    x, weight, bias, padding, *_ = inputs
    ctx.save_for_backward(x, weight)
    ctx.conv = dict(padding=tuple(padding))
    ctx.bias_dtype = None if bias is None else bias.dtype


def _conv2d_gradients(ctx, grad):
    """PyTorch's own convolution gradients, in the wider of the input's and the weights' types (the forward
    takes them mixed, say a bfloat16 input with float32 weights, where PyTorch's gradients need one type),
    each returned in its tensor's own type."""
    x, weight = ctx.saved_tensors
    wide = torch.promote_types(x.dtype, weight.dtype)
    grad_x = grad_w = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_x = torch.nn.grad.conv2d_input(x.shape, weight.to(wide), grad.to(wide), **ctx.conv).to(x.dtype)
    if ctx.needs_input_grad[1]:
        grad_w = torch.nn.grad.conv2d_weight(x.to(wide), weight.shape, grad.to(wide), **ctx.conv).to(weight.dtype)
    if ctx.bias_dtype is not None and ctx.needs_input_grad[2]:
        grad_b = grad.to(wide).sum(dim=(0, 2, 3)).to(ctx.bias_dtype)
    return grad_x, grad_w, grad_b


def _backward(ctx, grad):
    return *_conv2d_gradients(ctx, grad), None, None, None, None, None, None


winograd_conv2d.register_autograd(_backward, setup_context=_setup_context)


@torch.library.custom_op("nova::conv2d", mutates_args=())
def conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], stride: int, padding: list[int],
           dilation: int, groups: int, threads: int) -> torch.Tensor:
    """Any float32 conv2d (cross-correlation, CPU, zero padding; one stride and one dilation for both axes)
    through nova's engine with its automatic choice: Winograd where it takes the layer and is faster, else
    its direct path (strides, groups and depthwise, dilation, any kernel size). NCHW tensors, or
    channels_last ones in place (the output is channels_last too)."""
    return _conv2d_eager(x, weight, bias, stride, padding, dilation, groups, threads)


def _conv2d_eager(x, weight, bias, stride, padding, dilation, groups, threads):
    """The body of nova::conv2d."""
    plan, nhwc = _conv2d_plan(x, weight, bias, stride, padding, dilation, groups, threads)
    return _execute(plan, x, _empty_output(x, weight, padding, stride, dilation), nhwc)


def _conv2d_plan(x, weight, bias, stride, padding, dilation, groups, threads):
    """The checked input's plan and whether it runs on NHWC (a channels_last x, in place)."""
    _check_input(x, weight, groups)
    if x.dtype != torch.float32 or weight.dtype != torch.float32:
        raise ValueError(f"nova::conv2d takes float32 tensors; got input {x.dtype}, weight {weight.dtype}")
    nhwc = _channels_last(x)
    return _plan_for(x, weight, bias, padding, "", "", threads, layout="nhwc" if nhwc else "nchw", stride=stride,
                     dilation=dilation, groups=groups), nhwc


@conv2d.register_fake
def _(x, weight, bias, stride, padding, dilation, groups, threads):
    return _empty_output(x, weight, padding, stride, dilation)


def _setup_context_general(ctx, inputs, output):
    x, weight, bias, stride, padding, dilation, groups, _ = inputs
    ctx.save_for_backward(x, weight)
    ctx.conv = dict(stride=stride, padding=tuple(padding), dilation=dilation, groups=groups)
    ctx.bias_dtype = None if bias is None else bias.dtype


def _backward_general(ctx, grad):
    return *_conv2d_gradients(ctx, grad), None, None, None, None, None


conv2d.register_autograd(_backward_general, setup_context=_setup_context_general)


def _register_flop_formulas():
    """FLOPs of nova's operators for torch.utils.flop_counter.FlopCounterMode, as of the convolutions they
    replace (2 N K C/groups k^2 OH OW, what PyTorch counts for its own; it counted none for nova's, so a
    model's count fell by its converted layers). The backward runs PyTorch's convolutions, counted as such."""
    try:
        from torch.utils.flop_counter import conv_flop_count, register_flop_formula
    except ImportError:  # an older PyTorch: nothing to register with
        return

    def flops(x_shape, w_shape, *_, out_shape=None, **__):
        return conv_flop_count(x_shape, w_shape, out_shape)

    register_flop_formula(torch.ops.nova.winograd_conv2d)(flops)
    register_flop_formula(torch.ops.nova.conv2d)(flops)


_register_flop_formulas()


def _tile_r(tile: str) -> int:
    """The filter size r of a tile written "m,r" or "F(m,r)" (the engine validates the rest)."""
    try:
        return int(tile.replace("F(", "").replace(")", "").split(",")[1])
    except (IndexError, ValueError):
        raise ValueError(f"cannot parse tile '{tile}' (expected m,r or F(m,r), e.g. 6,3)") from None


def _default_tile(kernel: int, engine_precision: str = "fp32") -> str:
    # int8 stays at 6-point tiles, as the engine's automatic choice: with F(6,3) the validation networks
    # lose 4-11 top-1 points in int8 (F(4,3): under 0.5; docs/engine.md).
    if engine_precision == "int8":
        return "4,3" if kernel == 3 else "2,5"
    if engine_precision == "int8-spatial":  # its integer transforms fit int16 only for F(2,3) and F(4,3)
        if kernel != 3:
            raise ValueError("int8-spatial runs 3x3 kernels only (F(2,3), F(4,3))")
        return "4,3"
    return AUTO  # fp32, bf16, fp16: the engine's choice per input shape (bench/network_speed.py)


# tile="auto": the engine picks the tile (or its direct path) for each input shape, as nova.ConvPlan does
# without a tile, with the engine's default transforms (the catalogue's fp32 entries). The default in
# fp32, bf16 and fp16: a fixed F(6,3) streamed 64 taps of transformed filters per layer, 67 MB at 512
# channels in fp32, so ResNet-18's 7x7 and 14x14 stages ran slower than PyTorch's own convolutions; and
# at network level "auto" lost no more top-1 than F(4,3) or F(6,3) with the catalogue's bf16 and fp16
# transforms (validation/engine_lowp.py --tiles auto,4,6: 0.00-0.04 points, logits closer to float64).
# int8 keeps its fixed tile: its accuracy hangs on the int8 catalogue points.
AUTO = "auto"


def _beside_the_plans(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether nn.Conv2d takes x and the engine's plans do not: an unbatched (C, H, W) input, an empty
    batch, float64 tensors, tensors off the CPU (a converted model moved to a GPU)."""
    return x.dim() == 3 or (x.dim() == 4 and x.shape[0] == 0) or torch.float64 in (x.dtype, weight.dtype) \
        or x.device.type != "cpu" or weight.device.type != "cpu"


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _pre_padding(padding_mode: str, padding: tuple, pads: Optional[tuple] = None) -> Optional[tuple]:
    """F.pad's (left, right, top, bottom) where the layer pads its input before a convolution without
    padding, as nn.Conv2d does: a padding mode other than zeros, or `pads` that are not the same on both
    sides (padding="same" with an even kernel or a dilation: nn.Conv2d's own amounts); None where the engine
    pads (zeros, `padding` on each side)."""
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {', '.join(_PADDING_MODES)}, got {padding_mode!r}")
    symmetric = pads is None or (pads[0] == pads[1] and pads[2] == pads[3])
    if padding_mode == "zeros" and symmetric:
        return None
    return tuple(pads) if pads is not None else (padding[1], padding[1], padding[0], padding[0])


# The devices whose layers were told once that PyTorch runs them (_warn_off_the_cpu).
_warned_devices: set = set()


def _warn_off_the_cpu(x: torch.Tensor, weight: torch.Tensor):
    """Says once per device type that nova's layers there run PyTorch's convolution, not nova's."""
    device = x.device if x.device.type != "cpu" else weight.device
    if device.type == "cpu" or device.type in _warned_devices:
        return
    _warned_devices.add(device.type)
    warnings.warn(f"nova.torch: layers on {device.type} tensors run PyTorch's own convolution (nova's engine "
                  "runs on CPU tensors; replace_conv2d leaves layers whose weights are on a GPU to PyTorch; "
                  "nova.CudaConvPlan is the CUDA path)", RuntimeWarning, stacklevel=4)


# Whether any autocast is on: 0.3 us a call here against torch.is_autocast_enabled("cpu")'s 0.5, which every
# layer call would pay otherwise (22-29 us of Python each); where PyTorch lacks it, the public test decides.
_any_autocast = getattr(torch._C, "_is_any_autocast_enabled", lambda: True)


def _autocast_type(x: torch.Tensor) -> Optional[torch.dtype]:
    """The type nn.Conv2d computes in and returns under torch.autocast on the CPU (bfloat16 or float16)
    where x is of a type the layers take, else None."""
    if not _any_autocast() or not torch.is_autocast_enabled("cpu") or x.device.type != "cpu" \
            or x.dtype not in _IO_TYPES:
        return None
    return torch.get_autocast_dtype("cpu")


class _EagerLayer(nn.Module):
    """What WinogradConv2d and NovaConv2d share: the eager forward through the layer's last plan (_LastPlan),
    which is not saved with the module (an engine object, remade at the first call), and the paddings the
    engine does not make (_pre_padding: the input padded by F.pad, then convolved with padding 0;
    self.padding is then (0, 0) and _pre_pad F.pad's amounts)."""
    _last_plan: Optional[_LastPlan] = None
    padding_mode: str = "zeros"
    _pre_pad: Optional[tuple] = None
    # What the subclasses set in their constructors (declared here for the shared methods' types).
    weight: torch.Tensor
    bias: Optional[torch.Tensor]
    threads: int

    def _make_plan(self, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], threads: int):
        """(plan, nhwc, size) for x: the subclass's engine plan."""
        raise NotImplementedError

    def _torch_conv2d(self, x: torch.Tensor) -> torch.Tensor:
        """The layer through PyTorch's own convolution."""
        raise NotImplementedError

    def _set_padding(self, padding: tuple, padding_mode: str, pads: Optional[tuple] = None):
        self._pre_pad = _pre_padding(padding_mode, padding, pads)
        self.padding_mode = padding_mode
        self.padding = (0, 0) if self._pre_pad is not None else tuple(padding)

    def _padded(self, x: torch.Tensor) -> torch.Tensor:
        """The batch x padded by the layer's padding (the forwards make an unbatched input a batch of one
        first, so that one path pads)."""
        if self._pre_pad is None:
            return x
        return F.pad(x, self._pre_pad, mode="constant" if self.padding_mode == "zeros" else self.padding_mode)

    def _padding_repr(self) -> str:
        if self._pre_pad is None:
            return f"padding={self.padding}"
        left, right, top, bottom = self._pre_pad
        padding = (top, left) if (left, top) == (right, bottom) else f"(top {top}, bottom {bottom}, left {left}, " \
                                                                  f"right {right})"
        return f"padding={padding}" + ("" if self.padding_mode == "zeros" else f", padding_mode={self.padding_mode!r}")

    def _run_eager(self, x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], layer: tuple):
        threads = self.threads or torch.get_num_threads()
        key = _last_plan_key(x, weight, bias, threads, layer)
        last = self._last_plan
        if last is None or last.key != key or _profiled is not None or not last.unchanged():
            plan, nhwc, size = self._make_plan(x, weight, bias, threads)
            last = _LastPlan(key, plan, nhwc, size, weight, bias)
            self._last_plan = last
        return last.run(x)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_last_plan", None)
        return state

    def _as_a_batch_or_by_pytorch(self, x: torch.Tensor) -> torch.Tensor:
        """What nn.Conv2d takes and the engine's plans do not (_beside_the_plans): an unbatched (C, H, W)
        input, run as a batch of one; an empty batch, float64 tensors and tensors on another device than
        the CPU through PyTorch's own convolution (an empty output with its autograd; float64, which the
        engine, computing in FP32, would make less accurate than asked; a GPU's tensors, which the engine
        cannot read: a converted model moved with .cuda() keeps working, and is told so once)."""
        if x.dim() == 3:
            return self.forward(x.unsqueeze(0)).squeeze(0)
        _warn_off_the_cpu(x, self.weight)
        return self._torch_conv2d(x)


def _check_threads(threads) -> None:
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be an int, not {type(threads).__name__}")
    if not 0 <= threads <= 1024:
        raise ValueError(f"threads must be 0 (PyTorch's thread count) or 1..1024, got {threads}")


def _check_transform_type(transform) -> None:
    if transform is not None and not isinstance(transform, _nova.Transform):
        raise TypeError(f"transform must be a nova.Transform (nova.Transform(\"6,3\", points), "
                        f"nova.load_transform(path)), not {type(transform).__name__}; a tile goes in tile=")


def _check_winograd_options(kernel: int, tile: str, transform_json: str, threads: int, precision: str,
                            lowp_kernel: str) -> None:
    """Makes the plan of a one-pixel layer with these options, so that a tile without a default transform,
    a transform that fails verification or a tile the precision cannot run is refused when the layer is
    made, not at its first forward (replace_conv2d had swapped the layers by then, and every forward of the
    model then failed)."""
    engine, _, arithmetic = precision.partition(":")
    transform = _nova.Transform.from_json(transform_json) if transform_json else None
    _nova.ConvPlan((1, 1, 1, 1, 1), kernel=(kernel, kernel), padding=(kernel // 2, kernel // 2),
                   weights=torch.ones(1, 1, kernel, kernel), threads=threads or 1, tile=tile, transform=transform,
                   algorithm="winograd", precision=engine,
                   fp16_arithmetic=(arithmetic or "auto") if engine == "fp16" else "auto",
                   bf16_arithmetic=(arithmetic or "auto") if engine == "bf16" else "auto", lowp_kernel=lowp_kernel)


class WinogradConv2d(_EagerLayer):
    """A Conv2d (stride 1, dilation 1, groups 1; any padding_mode) computed by nova's Winograd engine.

    ``tile`` is "m,r" or "auto" (the engine's fastest estimate for each input shape with its default
    transforms: in fp32 a tile up to F(7,3), whose error is about 10x F(4,3)'s, in bf16 and fp16 up to
    F(6,3), or its direct path where that is faster). Defaults: "auto" in fp32, bf16 and fp16; in int8
    F(4,3) and F(2,5), which keep int8 accurate. A fixed low-precision tile uses nova's catalogue transform
    for its tile and precision. ``transform`` an explicit
    ``nova.Transform`` (its r must match the kernel); ``threads`` 0 means PyTorch's intra-op thread count
    (``torch.get_num_threads()``, read at each forward).
    ``precision`` is the type of the Winograd-domain GEMMs: "fp32"; "bf16" (= the bf16-storage preset:
    AMX where admitted, vdpbf16ps on AMD CPUs with AVX512-BF16, else FP32 FMAs on bf16 operands; "bf16-fma" /
    "bf16-dot" force FMAs or vdpbf16ps),
    "fp16-storage" (fp16 U and V, FP32 arithmetic), "fp16-fma" (fp16 FMAs over chunks of 32 channels, FP32
    sums of the chunks), "fp16" (fp16-fma where the CPU has AVX512-FP16, else fp16-storage) or "int8"
    (int8-tap-channel: per-tap x per-channel U, per-tap V scales from each call's data). Without an explicit transform, a low-precision layer uses nova's catalogue entry for
    its tile and precision; the input, output, bias and ReLU stay float32. ``lowp_kernel`` picks the kernel
    of low-precision GEMMs: "auto" (AMX where this process admitted it, else AVX-512, else portable),
    "portable", "simd", "avx512" (never AMX: the same bits on every machine) or "amx" (an error where it
    cannot run); see nova.ConvPlan.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, padding=1, bias: bool = True,
                 tile: Optional[str] = None, transform: Optional["_nova.Transform"] = None, threads: int = 0,
                 precision: str = "fp32", lowp_kernel: str = "auto", padding_mode: str = "zeros"):
        super().__init__()
        engine_precision = _engine_precision(precision)
        _nova.check_lowp_kernel(lowp_kernel)  # here, not at the first forward
        if kernel_size not in (3, 5):
            raise ValueError(f"WinogradConv2d supports 3x3 and 5x5 kernels, not {kernel_size}x{kernel_size}")
        self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, kernel_size
        self._set_padding((padding, padding) if isinstance(padding, int) else tuple(padding), padding_mode)
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size, kernel_size))
        self.bias = nn.Parameter(torch.empty(out_channels)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        _check_threads(threads)
        if transform is not None:
            _check_transform_type(transform)
            if transform.r != kernel_size:
                raise ValueError(f"transform {transform.tile} is for {transform.r}-tap filters, the kernel is {kernel_size}")
            self.tile, self._transform_json = transform.tile, transform.to_json()
        else:
            base = engine_precision.partition(":")[0]
            self.tile = tile or _default_tile(kernel_size, base)
            if self.tile != AUTO:
                r = _tile_r(self.tile)
                if r != kernel_size:
                    raise ValueError(f"tile {self.tile} is for {r}-tap filters, the kernel is {kernel_size}")
            self._transform_json = ""
            if base not in ("fp32", "int8-spatial") and self.tile != AUTO:  # int8-spatial: the engine's integer points {0, ±1, ±2}
                from . import catalogue_transform  # the package's own catalogue (installed with it)
                try:
                    self._transform_json = catalogue_transform(self.tile, _CATALOGUE_PRESET[base]).to_json()
                except ValueError:
                    pass  # no catalogue entry for this tile: the engine's default transform
        self.threads = threads
        self.precision = precision
        self.lowp_kernel = lowp_kernel
        self._engine_precision = engine_precision
        if self.tile != AUTO or self._transform_json:
            _check_winograd_options(kernel_size, self._tile(), self._transform_json, threads, engine_precision,
                                    lowp_kernel)

    @classmethod
    def from_conv2d(cls, conv: nn.Conv2d, tile: Optional[str] = None, transform=None, precision: str = "fp32",
                    threads: int = 0, lowp_kernel: str = "auto") -> "WinogradConv2d":
        """A WinogradConv2d sharing ``conv``'s parameters (same tensors, so the state_dict is unchanged)."""
        reason = ineligibility(conv, _engine_precision(precision).partition(":")[0])
        if reason:
            raise ValueError(f"cannot convert this Conv2d: {reason}")
        padding = conv.padding
        if isinstance(padding, str):  # 'valid', or 'same' at stride 1 with an odd kernel: (k - 1) / 2 a side
            padding = (0, 0) if padding == "valid" else ((conv.kernel_size[0] - 1) // 2,) * 2
        module = cls(conv.in_channels, conv.out_channels, conv.kernel_size[0], padding=padding,
                     bias=conv.bias is not None, tile=tile, transform=transform, threads=threads, precision=precision,
                     lowp_kernel=lowp_kernel, padding_mode=conv.padding_mode)
        module.weight = conv.weight
        module.bias = conv.bias
        return module

    def _tile(self) -> str:
        return "" if self._transform_json or self.tile == AUTO else self.tile

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias = self.weight, self.bias
        cast = _autocast_type(x)
        if cast is not None and x.dtype != cast:  # as nn.Conv2d under autocast: the output in the autocast
            x = x.to(cast)  # type; the weights stay as they are (the engine computes from their FP32 values)
        if self._pre_pad is not None:
            if x.dim() == 3:
                return self.forward(x.unsqueeze(0)).squeeze(0)
            x = self._padded(x)
        if _beside_the_plans(x, weight):
            return self._as_a_batch_or_by_pytorch(x)
        if not _eager_call_ok(x, weight, bias):
            if _under_torch_func():
                return self._torch_conv2d(x)
            return winograd_conv2d(x, weight, bias, list(self.padding), self._tile(), self._transform_json,
                                   self.threads, self._engine_precision, self.lowp_kernel)
        return self._run_eager(x, weight, bias, (self.padding, self._tile(), self._transform_json,
                                                 self._engine_precision, self.lowp_kernel))

    def _torch_conv2d(self, x: torch.Tensor) -> torch.Tensor:
        bias = None if self.bias is None else self.bias.to(x.dtype)  # the types may be mixed, as in forward
        return F.conv2d(x, self.weight.to(x.dtype), bias, padding=self.padding)

    def _make_plan(self, x, weight, bias, threads):
        plan, nhwc = _winograd_plan(x, weight, bias, self.padding, self._tile(), self._transform_json, threads,
                                    self._engine_precision, self.lowp_kernel)
        return plan, nhwc, _output_size(x, weight, self.padding)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, {self._padding_repr()}, "
                f"tile={self.tile}, precision={self.precision}")


def _module_ineligibility(conv: nn.Conv2d) -> str:
    """What about the module itself, beyond its convolution, a nova layer in its place would not do, or "".

    replace_conv2d had put nova's layers in place of Conv2d subclasses with their own forward (timm's
    StdConv2d standardizes its weights there: relative error 0.93, silently) and of layers with hooks
    (dropped: a forward hook doubling the output, 0.5), and raised part-way through a model on
    parametrized weights (weight_norm, spectral_norm)."""
    if nn.utils.parametrize.is_parametrized(conv):
        return "its weights come from a parametrization (weight_norm, spectral_norm, ...)"
    if type(conv).forward is not nn.Conv2d.forward or type(conv)._conv_forward is not nn.Conv2d._conv_forward:
        return f"{type(conv).__name__} computes its own forward"
    hooks = [name for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
             if getattr(conv, name, None)]
    if hooks:
        return f"it has {', '.join(h.strip('_').replace('_', ' ') for h in hooks)} (nova's layer would not run them)"
    if not isinstance(conv.weight, nn.Parameter) or (conv.bias is not None and not isinstance(conv.bias, nn.Parameter)):
        return "its weight or bias is not a Parameter"
    return ""


def ineligibility(conv: nn.Module, precision: str = "fp32") -> str:
    """Why ``conv`` cannot run through nova's Winograd engine (at ``precision``), or "" when it can."""
    if not isinstance(conv, nn.Conv2d):
        return f"{type(conv).__name__} is not a Conv2d"
    module = _module_ineligibility(conv)
    if module:
        return module
    kh, kw = conv.kernel_size
    if kh != kw or kh not in (3, 5):
        return f"kernel {kh}x{kw} (Winograd here takes 3x3 or 5x5)"
    if conv.stride != (1, 1):
        return f"stride {conv.stride}"
    if conv.dilation != (1, 1):
        return f"dilation {conv.dilation}"
    if conv.groups != 1:
        return f"groups={conv.groups}"
    if isinstance(conv.padding, str) and conv.padding not in ("same", "valid"):
        return f"padding '{conv.padding}'"
    if conv.weight.dtype not in _IO_TYPES:
        return f"weights are {conv.weight.dtype}, not float32, float16 or bfloat16"
    if conv.weight.device.type != "cpu":
        return f"weights on {conv.weight.device}"
    if precision == "int8-spatial" and kh != 3:
        return "int8-spatial runs 3x3 kernels only (F(2,3), F(4,3))"
    return ""


def engine_ineligibility(conv: nn.Module) -> str:
    """Why ``conv`` cannot run through nova's engine at all (NovaConv2d: its direct path or Winograd), or ""."""
    if not isinstance(conv, nn.Conv2d):
        return f"{type(conv).__name__} is not a Conv2d"
    module = _module_ineligibility(conv)
    if module:
        return module
    if conv.stride[0] != conv.stride[1]:
        return f"stride {conv.stride} (the engine takes one stride for both axes)"
    if conv.dilation[0] != conv.dilation[1]:
        return f"dilation {conv.dilation} (the engine takes one dilation for both axes)"
    if conv.weight.dtype != torch.float32:
        return f"weights are {conv.weight.dtype}, not float32"
    if conv.weight.device.type != "cpu":
        return f"weights on {conv.weight.device}"
    return ""


class NovaConv2d(_EagerLayer):
    """Any float32 Conv2d (one stride and one dilation for both axes; any padding_mode) computed by nova's engine:
    Winograd where the engine takes the layer and estimates it faster, else its direct path (strides,
    groups and depthwise, dilation, any kernel size). ``replace_conv2d(model, direct=True)`` puts it on the
    layers WinogradConv2d cannot take; built with ``from_conv2d``, it shares the Conv2d's parameters."""

    def __init__(self, conv: nn.Conv2d, threads: int = 0):
        super().__init__()
        _check_threads(threads)
        reason = engine_ineligibility(conv)
        if reason:
            raise ValueError(f"cannot run this Conv2d through nova's engine: {reason}")
        self.in_channels, self.out_channels = conv.in_channels, conv.out_channels
        self.kernel_size, self.stride, self.dilation = conv.kernel_size, conv.stride[0], conv.dilation[0]
        self.groups, self.threads = conv.groups, threads
        padding, pads = conv.padding, None
        if isinstance(padding, str):  # 'valid', or 'same' (stride 1 by PyTorch's rule): nn.Conv2d's amounts,
            pads = (0, 0, 0, 0) if padding == "valid" else tuple(conv._reversed_padding_repeated_twice)
            padding = (pads[2], pads[0])  # uneven for even kernels and some dilations: F.pad makes them
        self._set_padding(tuple(padding), conv.padding_mode, pads)
        self.weight = conv.weight
        self.bias = conv.bias

    @classmethod
    def from_conv2d(cls, conv: nn.Conv2d, threads: int = 0) -> "NovaConv2d":
        return cls(conv, threads)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cast = _autocast_type(x)
        if cast is not None:  # the engine's direct path is FP32: computed there, returned as nn.Conv2d would
            with torch.autocast("cpu", enabled=False):
                return self.forward(x.float()).to(cast)
        weight, bias = self.weight, self.bias
        if self._pre_pad is not None:
            if x.dim() == 3:
                return self.forward(x.unsqueeze(0)).squeeze(0)
            x = self._padded(x)
        if _beside_the_plans(x, weight):
            return self._as_a_batch_or_by_pytorch(x)
        if not _eager_call_ok(x, weight, bias):
            if _under_torch_func():
                return self._torch_conv2d(x)
            return conv2d(x, weight, bias, self.stride, list(self.padding), self.dilation, self.groups, self.threads)
        return self._run_eager(x, weight, bias, (self.stride, self.padding, self.dilation, self.groups))

    def _torch_conv2d(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def _make_plan(self, x, weight, bias, threads):
        plan, nhwc = _conv2d_plan(x, weight, bias, self.stride, self.padding, self.dilation, self.groups, threads)
        return plan, nhwc, _output_size(x, weight, self.padding, self.stride, self.dilation)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"{self._padding_repr()}, dilation={self.dilation}, groups={self.groups}")


@dataclasses.dataclass
class ReplacementReport:
    replaced: list = dataclasses.field(default_factory=list)      # (name, description)
    skipped: list = dataclasses.field(default_factory=list)       # (name, reason)
    notes: list = dataclasses.field(default_factory=list)         # advice on the process's settings

    def __str__(self) -> str:
        lines = [f"replaced {len(self.replaced)} Conv2d layer(s), skipped {len(self.skipped)}"]
        lines += [f"  replaced {name}: {what}" for name, what in self.replaced]
        lines += [f"  skipped  {name}: {why}" for name, why in self.skipped]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def openmp_spin_note() -> str:
    """Advice when nova runs on its own threads beside PyTorch's OpenMP threads with their default
    spin-wait, else "".

    After each of its parallel operations, libgomp's threads spin for up to GOMP_SPINCOUNT iterations
    (300,000 by default) before they sleep, on the cores that nova's next layer needs. Importing
    nova.torch makes nova run on those threads (share_pytorch_threads), which removes the contention;
    where that is turned off (NOVA_SHARE_OPENMP=0) or PyTorch's runtime was not found, a short spin-wait
    is the remedy: measured on the development machine (2 cores, bench/network_speed.py, session 23, two
    runs each way), VGG-16 through the drop-in on nova's own threads 128-129 -> 87-93 ms (NCHW) and
    114-120 -> 65-74 ms (channels_last) with GOMP_SPINCOUNT=10000, PyTorch's own times unchanged. libgomp
    reads the variable when it loads, so it has to be in the environment before Python starts (or
    before torch is imported)."""
    if _nova.shared_openmp_library():
        return ""
    if os.environ.get("GOMP_SPINCOUNT") or os.environ.get("OMP_WAIT_POLICY"):
        return ""
    if "ATen parallel backend: OpenMP" not in torch.__config__.parallel_info():
        return ""
    return ("nova runs on its own threads, and PyTorch's OpenMP threads spin-wait after each of its operations on "
            "the cores nova's layers need (up to 300,000 iterations, GOMP_SPINCOUNT unset): unset NOVA_SHARE_OPENMP "
            "so that nova runs on PyTorch's threads, or set GOMP_SPINCOUNT=10000 in the environment before Python "
            "starts (VGG-16 through nova on 2 cores: 1.4-1.8x faster either way; docs/engine.md, sessions 23-24)")


def weights_changed(model: nn.Module) -> int:
    """Tell nova that the weights or biases of nova's layers in ``model`` changed in a way it may not see,
    so that each layer transforms its filters again at its next forward. Writes through the parameters (an
    optimizer step, ``p.mul_(mask)`` under ``torch.no_grad()``, ``load_state_dict``) and whole-tensor
    writes through ``.data`` are seen without it; a write through ``.data`` that changes only some
    elements (a pruning mask applied with ``w.data.mul_(mask)``, a ``copy_`` that differs in a few places)
    may not be, since ``.data`` bypasses the version counter and nova then compares 16 sampled words.
    Returns the number of nova layers found."""
    weights = set()
    count = 0
    for module in model.modules():
        if isinstance(module, _EagerLayer):
            module._last_plan = None
            weights.add(module.weight.data_ptr())
            count += 1
    with _plans_lock:  # the shared cache's plans of these weights (torch.compile and the operators use it)
        for key in [k for k in _plans if k[_KEY_WEIGHT_PTR] in weights]:
            del _plans[key]
    return count


def replace_conv2d(model: nn.Module, tile: Optional[str] = None, transform=None, precision: str = "fp32",
                   threads: int = 0, lowp_kernel: str = "auto", direct: bool = False) -> ReplacementReport:
    """Replace every eligible nn.Conv2d in ``model`` (in place) by a WinogradConv2d sharing its parameters.

    ``tile`` applies to layers whose kernel matches its r (others get the default tile for their kernel),
    "auto" to every layer; ``transform`` likewise. With ``direct`` (float32 only), the Conv2d layers that
    Winograd cannot take (strides, groups and depthwise, dilation, other kernel sizes) become NovaConv2d
    layers on nova's direct path. Returns a report of what was replaced and what was skipped, and why."""
    if isinstance(model, nn.Conv2d):  # it has no children: "replaced 0" and nothing changed
        raise TypeError("replace_conv2d replaces the Conv2d layers inside a module, not the module itself: pass "
                        "its parent (or nn.Sequential(conv)), or make the layer with "
                        "nova.torch.WinogradConv2d.from_conv2d(conv)")
    if direct and precision != "fp32":
        raise ValueError(f"direct=True replaces layers with nova's float32 direct path; precision is '{precision}'")
    _check_transform_type(transform)
    _check_threads(threads)
    base = _engine_precision(precision).partition(":")[0]  # raises on an unknown precision, before any change
    _nova.check_lowp_kernel(lowp_kernel)
    # The new layers are all made first and put in place after, so that an error leaves the model as it was.
    report = ReplacementReport()
    changes: list[tuple[nn.Module, str, nn.Module]] = []
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if not isinstance(child, nn.Conv2d):
                continue
            name = f"{parent_name}.{child_name}" if parent_name else child_name
            reason = ineligibility(child, base)
            if reason and direct and not engine_ineligibility(child):
                changes.append((parent, child_name, NovaConv2d.from_conv2d(child, threads=threads)))
                report.replaced.append((name, f"{child.kernel_size[0]}x{child.kernel_size[1]} -> nova's direct path "
                                              f"(not Winograd: {reason})"))
                continue
            if reason:
                if direct:  # neither path: both reasons
                    reason = f"not Winograd: {reason}; not the direct path: {engine_ineligibility(child)}"
                report.skipped.append((name, reason))
                continue
            k = child.kernel_size[0]
            use_transform = transform if transform is not None and transform.r == k else None
            use_tile = tile if (tile == AUTO or (tile and _tile_r(tile) == k)) else None
            new = WinogradConv2d.from_conv2d(child, tile=use_tile, transform=use_transform, precision=precision,
                                             threads=threads, lowp_kernel=lowp_kernel)
            changes.append((parent, child_name, new))
            what = "the engine's choice per input shape" if new.tile == AUTO else new.tile
            report.replaced.append((name, f"{k}x{k} -> Winograd {what}"))
    for parent, child_name, layer in changes:
        setattr(parent, child_name, layer)
    note = openmp_spin_note() if report.replaced else ""
    if note:
        report.notes.append(note)
    return report
