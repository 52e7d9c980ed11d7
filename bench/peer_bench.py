#!/usr/bin/env python3
"""Side-by-side FP32 convolution benchmark: nova against oneDNN (direct and Winograd), ncnn (Winograd on)
and PyTorch's conv2d, on the layer set of issue 5, measured in one run.

  python3 bench/peer_bench.py [--build build] [--threads 1,2] [--rounds 2] [--errors] [--json out.json]

nova is timed through `build/nova bench conv --format json`, on NCHW tensors ("nova") and on NCHW16c
tensors ("nova 16c": the blocked layout the peers are timed in, no transposes); oneDNN through
`build/nova_peer_onednn` (C++ API, OMP_NUM_THREADS threads, its preferred blocked layouts, reorders
outside the timing); ncnn (an unpacked input, packed inside the timing; its packed output taken as it is) and
PyTorch in worker subprocesses of this script (each library in its own process, so their OpenMP
runtimes do not meet). For every layer all peers run back to back; every peer is measured `--rounds`
times, and the best median of the
rounds is kept for each (the machine may be shared; this treats every peer the same). GFLOP/s are
direct-equivalent: 2*N*K*C*H*W*9 / time. Peers that are not installed are reported as missing.

  python3 bench/peer_bench.py --lowp [--threads 1] [--rounds 2] [--wall] [--json out.json]

prints only the low-precision table instead: nova's Winograd with fp32, bf16, int8 (per-call and
calibrated scales) and fp16 GEMMs, oneDNN's bf16 direct, int8 direct and int8 Winograd, PyTorch's
bfloat16 conv2d, ncnn's int8 Winograd and bf16-storage convolution (process CPU ms per execute), the
relative L2 error against float64 of nova for each precision, of oneDNN's bf16 and int8 (on nova's
data, value for value: bench/peers/peer_onednn.cpp --check; its int8 Winograd takes only u8 input, so
oneDNN's two int8 algorithms are also checked on the same data moved into [0, 1], printed on a line of
their own), of PyTorch's bf16 (same distributions) and of ncnn int8/bf16 (docs/engine.md), ncnn's time over nova's
(above 1: nova is faster) for bf16, int8 and int8 cal, and oneDNN's over nova's (issue 6's targets: bf16
against oneDNN's bf16 direct, int8 against its int8 Winograd and its int8 direct). ncnn (in a worker
subprocess, bench/peers/ncnn_lowp.py, net.opt.num_threads = --threads): int8 with weights quantized per
output channel and a calibrated input scale (int8_scale_term 2, fp32 output), bf16 with
use_bf16_storage (bf16 activations; on its Winograd path fp32 weights and arithmetic); the input is
quantized / cast and packed outside the timing, the output taken in ncnn's packed layout. Its times
with fp32 input and output are in the JSON (ncnn_fp32io). Where ncnn has no such path the column
says n/a and why.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation"))
import script_checks  # noqa: E402

LAYERS = [(1, 64, 56, 56, 64), (1, 128, 28, 28, 128), (1, 256, 14, 14, 256), (1, 512, 7, 7, 512),
          (8, 64, 56, 56, 64), (8, 128, 28, 28, 128), (8, 256, 14, 14, 256), (8, 512, 7, 7, 512),
          (1, 64, 224, 224, 64)]


def flops(layer, k=3):
    n, c, h, w, kk = layer
    return 2.0 * n * kk * c * h * w * k * k


def layer_name(layer):
    return "x".join(map(str, layer[:4])) + "->" + str(layer[4])


def not_as_asked(extra, j):
    """Why nova's JSON `j`, asked for with the options `extra`, is not that column's time (the plan ran
    another precision, or the FP32 direct path), or None when it is."""
    asked = extra[extra.index("--dtype") + 1] if "--dtype" in extra else "fp32"
    if j.get("dtype") != asked or (asked != "fp32" and j.get("algorithm") != "winograd"):
        return f"nova ran {j.get('dtype')} {j.get('algorithm')}, not {asked} Winograd"
    return None


def machine_line(what):
    """The machine and the data behind every figure of the run, printed above its tables."""
    import machine
    return (f"{machine.summary()}; "
            f"{what}; input uniform in [-1, 1], weights in [-0.1, 0.1], bias in [-1, 1] (nova and oneDNN)")


def shape_text(layer):
    return ",".join(str(v) for v in layer)


# ---------------------------------------------------------------- workers (run in subprocesses)

def _time(fn, budget_ms=500.0):
    """(median wall ms, process CPU ms) per call. The CPU time is the total over the timed calls divided by
    their number: a median of per-call readings would leave out what the library's spinning OpenMP threads
    did since the last scheduler tick (Linux adds a thread's time on another core to the process clock only
    then or when it blocks)."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = (time.perf_counter() - t0) * 1e3
    reps = max(5, min(200, int(budget_ms / max(once, 1e-3))))
    ts = []
    c0 = time.process_time()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    cpu = (time.process_time() - c0) * 1e3 / reps
    ts.sort()
    return ts[len(ts) // 2], cpu


def worker_torch(configs, dtype="float32", check=False):
    """PyTorch's conv2d in `dtype` on nova bench conv's distributions (input uniform in [-1, 1], weights
    in [-0.1, 0.1], bias in [-1, 1]); with check, also its relative L2 error against a float64 conv2d of
    the input's values in `dtype` with the FP32 weights and bias (as nova's --check measures its own)."""
    import torch
    import torch.nn.functional as F
    out = []
    for layer, threads in configs:
        torch.set_num_threads(threads)
        n, c, h, w, k = layer
        gen = torch.Generator().manual_seed(1)
        x32 = torch.rand(n, c, h, w, generator=gen) * 2 - 1
        w32 = (torch.rand(k, c, 3, 3, generator=gen) * 2 - 1) * 0.1
        b32 = torch.rand(k, generator=gen) * 2 - 1
        t = getattr(torch, dtype)
        x, wt, b = x32.to(t), w32.to(t), b32.to(t)
        with torch.no_grad():
            ms, cpu = _time(lambda: F.conv2d(x, wt, b, padding=1))
            res = {"layer": layer, "threads": threads, "median_ms": ms, "cpu_ms_per_execute": cpu}
            if check:
                ref = F.conv2d(x.double(), w32.double(), b32.double(), padding=1)
                d = F.conv2d(x, wt, b, padding=1).double() - ref
                res["rel_l2_error"] = float(d.norm() / ref.norm())
        out.append(res)
    return out


def worker_ncnn(configs):
    import struct

    import ncnn
    import numpy as np
    out = []
    for layer, threads in configs:
        n, c, h, w, k = layer
        param = ("7767517\n2 2\nInput data 0 1 data 0=%d 1=%d 2=%d\n"
                 "Convolution conv 1 1 data out 0=%d 1=3 3=1 4=1 5=1 6=%d\n") % (w, h, c, k, k * c * 9)
        rng = np.random.default_rng(1)
        weights = ((rng.random(k * c * 9, dtype=np.float32) - 0.5) * 0.1).astype(np.float32)
        bias = rng.random(k, dtype=np.float32)
        net = ncnn.Net()
        net.opt.num_threads = threads
        net.opt.use_winograd_convolution = True
        net.opt.use_packing_layout = True
        for flag in ("use_fp16_storage", "use_fp16_packed", "use_fp16_arithmetic", "use_bf16_storage",
                     "use_int8_inference"):
            setattr(net.opt, flag, False)
        net.load_param_mem(param)
        net.load_model_mem(struct.pack("<I", 0) + weights.tobytes() + bias.tobytes())
        x = ncnn.Mat((rng.random((c, h, w), dtype=np.float32) - 0.5).astype(np.float32))

        def run():
            for _ in range(n):  # ncnn has no batch dimension: one image at a time
                ex = net.create_extractor()
                ex.input("data", x)
                ex.extract("out")
        ms, cpu = _time(run)
        out.append({"layer": layer, "threads": threads, "median_ms": ms, "cpu_ms_per_execute": cpu})
    return out


def worker_ncnn_lowp(configs, check=False):
    """ncnn int8 and bf16 (bench/peers/ncnn_lowp.py), timed with _time."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import ncnn_lowp
    return ncnn_lowp.worker_ncnn_lowp(configs, _time, check)


# ---------------------------------------------------------------- driver

def run_worker(name, configs):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name]
    try:
        r = subprocess.run(cmd, input=json.dumps(configs), capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return None, last
    return json.loads(r.stdout), ""


def run_nova(build, layer, threads, extra=()):
    cmd = [os.path.join(build, "nova"), "bench", "conv", "--shape", shape_text(layer), "--threads", str(threads),
           "--format", "json", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("nova failed: " + r.stderr.strip())
    return json.loads(r.stdout)


def run_onednn(build, layer, threads, algorithm, dtype="f32", check=False):
    """oneDNN's time (bench/peers/peer_onednn.cpp); with check, also its error against float64 on nova's
    data ("rel_l2_error"; int8: "check_s8" on nova's int8 input codes where oneDNN takes an s8 source,
    "check_u8" on the same data moved into [0, 1], which its int8 Winograd needs)."""
    exe = os.path.join(build, "nova_peer_onednn")
    if not os.path.exists(exe):
        return None
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run([exe, "--shape", shape_text(layer), "--algorithm", algorithm, "--dtype", dtype,
                        *(["--check"] if check else [])], capture_output=True, text=True, env=env)
    if r.returncode != 0:  # built, but failed: not the same as missing
        return {"created": False, "error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]}
    j = json.loads(r.stdout)
    return j if j.get("created") else {"created": False}


def onednn_why(o):
    """Why run_onednn's answer `o` has no time for the layer: not built, failed, or not created."""
    if o is None:
        return "build/nova_peer_onednn not built (oneDNN not found)"
    if o.get("error"):
        return "failed: " + o["error"]
    return "oneDNN created no primitive for it (no implementation on this CPU)"


def best(old, new):
    if new is None:
        return old
    if old is None:
        return new
    return new if new < old else old


def measure(args):
    threads_list = [int(t) for t in args.threads.split(",")]
    configs = [(list(layer), t) for layer in LAYERS for t in threads_list]
    results = {(tuple(l), t): {"nova": None, "nova_info": None, "onednn_direct": None, "onednn_winograd": None,
                                "onednn_winograd_impl": "", "ncnn": None, "torch": None, "cpu": {}}
               for l, t in configs}
    missing = {}
    for rnd in range(args.rounds):
        print(f"round {rnd + 1}/{args.rounds}", file=sys.stderr)
        for layer, t in configs:
            key = (tuple(layer), t)
            res = results[key]
            j = run_nova(args.build, layer, t)
            if res["nova"] is None or j["median_ms"] < res["nova"]:
                res["nova"], res["nova_info"] = j["median_ms"], j
            res["cpu"]["nova"] = best(res["cpu"].get("nova"), j.get("cpu_ms_per_execute"))
            # The same plan on NCHW16c tensors: the blocked layout oneDNN and ncnn are timed in.
            j = run_nova(args.build, layer, t, ["--layout", "nchw16c"])
            res["nova_16c"] = best(res.get("nova_16c"), j["median_ms"])
            res["cpu"]["nova_16c"] = best(res["cpu"].get("nova_16c"), j.get("cpu_ms_per_execute"))
            for alg in ("direct", "winograd"):
                o = run_onednn(args.build, layer, t, alg)
                if not (o and o.get("created")):
                    seen = missing.setdefault("onednn " + alg, {}).setdefault(onednn_why(o), [])
                    if layer_name(layer) not in seen:
                        seen.append(layer_name(layer))
                else:
                    res["onednn_" + alg] = best(res["onednn_" + alg], o["median_ms"])
                    res["cpu"]["onednn_" + alg] = best(res["cpu"].get("onednn_" + alg), o.get("cpu_ms_per_execute"))
                    if alg == "winograd":
                        res["onednn_winograd_impl"] = o.get("impl", "")
            # The Python peers in their own processes, right after nova and oneDNN on the same layer,
            # so that all of them see the same machine load.
            for name in ("ncnn", "torch"):
                if name in missing:
                    continue
                out, err = run_worker(name, [(layer, t)])
                if out is None:
                    missing[name] = err
                    continue
                res[name] = best(res[name], out[0]["median_ms"])
                res["cpu"][name] = best(res["cpu"].get(name), out[0].get("cpu_ms_per_execute"))
    return results, missing


# Low-precision table (--lowp): nova's Winograd GEMM precisions (fp32, bf16, int8 with per-call and with
# calibrated scales, fp16; the automatic tile) beside oneDNN's bf16 direct, int8 direct and int8 Winograd,
# PyTorch's bfloat16 conv2d and ncnn's int8 and bf16, process CPU ms per execute, best of the rounds, with
# nova's (--check) and ncnn's error against float64.
# "int8 cal i8": int8 input tensor (scale 1/127), as oneDNN's u8 and ncnn's pre-quantized input are timed;
# "int8sp cal i8": the int8-spatial precision (ncnn's design: quantized before exact integer transforms) the same way;
# "fp16": the engine's choice of fp16 arithmetic (AVX512-FP16 where present), "fp16 io": the same with fp16
# input and output tensors (issue 6's FP16 path: "FP16 inputs and outputs"), "fp16 f32acc": FP32 arithmetic;
# "bf16 io": bf16 input and output tensors, as PyTorch's bf16 conv2d. Their --check error is against float64
# on the input's own (rounded) values. "... 16c": the same in the NCHW16c layout (--layout nchw16c), the
# blocked layout the peers are timed in (oneDNN's nChw16c, ncnn's packed blobs), without NCHW transposes.
LOWP_NOVA = [("fp32", ["--dtype", "fp32"]), ("bf16", ["--dtype", "bf16"]), ("bf16 io", ["--dtype", "bf16", "--io", "bf16"]),
             ("int8", ["--dtype", "int8"]), ("int8 cal", ["--dtype", "int8", "--calibrate"]),
             ("int8 cal i8", ["--dtype", "int8", "--calibrate", "--input-type", "int8"]),
             ("int8sp cal i8", ["--dtype", "int8-spatial", "--calibrate", "--input-type", "int8"]),
             ("fp16", ["--dtype", "fp16"]), ("fp16 io", ["--dtype", "fp16", "--io", "fp16"]),
             ("fp16 f32acc", ["--dtype", "fp16", "--fp16-arith", "fp32"]),
             ("bf16 io 16c", ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"]),
             ("int8 cal i8 16c", ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"]),
             ("fp16 16c", ["--dtype", "fp16", "--layout", "nchw16c"])]
LOWP_ONEDNN = [("dnnl bf16 d", "direct", "bf16"), ("dnnl int8 d", "direct", "int8"), ("dnnl int8 w", "winograd", "int8")]
LOWP_NCNN = [("ncnn int8", "int8"), ("ncnn bf16", "bf16")]
# ncnn's time over nova's, per nova column: (nova column, ncnn column).
LOWP_NCNN_RATIO = [("bf16", "ncnn bf16"), ("int8", "ncnn int8"), ("int8 cal", "ncnn int8"), ("int8 cal i8", "ncnn int8"),
                   ("int8sp cal i8", "ncnn int8"), ("int8 cal i8 16c", "ncnn int8")]
# oneDNN's time over nova's (issue 6's targets): bf16 against its bf16 direct convolution (AMX where the CPU
# has it), int8 against its int8 Winograd and, in a second row, its int8 direct convolution.
LOWP_DNNL_RATIO = [("bf16 io", "dnnl bf16 d"), ("bf16 io 16c", "dnnl bf16 d"), ("int8 cal i8", "dnnl int8 w"),
                   ("int8 cal i8 16c", "dnnl int8 w"), ("int8sp cal i8", "dnnl int8 w")]
LOWP_DNNL_DIRECT_RATIO = [("int8 cal i8", "dnnl int8 d"), ("int8 cal i8 16c", "dnnl int8 d"),
                          ("int8sp cal i8", "dnnl int8 d")]


def lowp_ncnn(args, configs):
    """ncnn int8/bf16 over the rounds: {(layer, threads): {"cpu_ms", "wall_ms", "rel_l2_error", "why",
    "fp32io_cpu_ms"}} (best times over the rounds, errors from round 1) and why the worker failed."""
    res = {(tuple(l), t): {"cpu_ms": {}, "wall_ms": {}, "rel_l2_error": {}, "why": {}, "fp32io_cpu_ms": {},
                           "fp32io_rel_l2_error": {}} for l, t in configs}
    for rnd in range(args.rounds):
        out, why = run_worker("ncnn_lowp_check" if rnd == 0 else "ncnn_lowp", configs)
        if out is None:
            return res, why
        for o in out:
            r = res[(tuple(o["layer"]), o["threads"])]
            for name, p in LOWP_NCNN:
                if o.get(p + "_why"):
                    r["why"][name] = o[p + "_why"]
                    continue
                r["cpu_ms"][name] = best(r["cpu_ms"].get(name), o.get(p + "_cpu_ms"))
                r["wall_ms"][name] = best(r["wall_ms"].get(name), o.get(p + "_ms"))
                r["fp32io_cpu_ms"][name] = best(r["fp32io_cpu_ms"].get(name), o.get(p + "_fp32io_cpu_ms"))
                if rnd == 0:
                    r["rel_l2_error"][name] = o.get(p + "_rel_l2_error")
                    r["fp32io_rel_l2_error"][name] = o.get(p + "_fp32io_rel_l2_error")
    return res, ""


def lowp_table(args):
    # Process CPU ms per execute by default (the total over the timed executes over their number: robust
    # on a shared machine, and with several threads the CPU the library burns, its spinning threads
    # included); --wall: median wall ms, the speed figure to use with several threads on a quiet machine.
    tkey = "median_ms" if args.wall else "cpu_ms_per_execute"
    threads_list = [int(t) for t in args.threads.split(",")]
    configs = [(layer, t) for layer in LAYERS for t in threads_list]
    torch_bf16 = {}  # (layer, threads) -> best process CPU ms over the rounds
    torch_bf16_err = {}  # (layer, threads) -> its error against float64, from round 1
    for rnd in range(args.rounds):
        out, why = run_worker("torch_bf16_check" if rnd == 0 else "torch_bf16", configs)
        if out is None:
            print(f"torch bf16: not measured ({why})", file=sys.stderr)
            break
        for o in out:
            key = (tuple(o["layer"]), o["threads"])
            torch_bf16[key] = best(torch_bf16.get(key), o.get(tkey))
            if o.get("rel_l2_error") is not None:
                torch_bf16_err[key] = o["rel_l2_error"]
    ncnn_res, ncnn_why = lowp_ncnn(args, configs)
    if ncnn_why:
        print(f"ncnn int8/bf16: not measured ({ncnn_why})", file=sys.stderr)
    ncnn_notes = {}  # column -> why it is n/a, printed once under the table
    dnnl_notes = {}  # oneDNN or nova column -> {why it has no time: layers}, printed under the table
    print(machine_line(f"nova's Winograd in each GEMM precision against the peers' low-precision convolutions; "
                       f"{'median wall' if args.wall else 'process CPU'} ms per execute, best of {args.rounds} "
                       f"round(s)"))
    rows = []
    for layer in LAYERS:
        for t in threads_list:
            cpu, err, path, dnnl_checks = {}, {}, {}, {}
            if torch_bf16.get((layer, t)):
                cpu["torch bf16"] = torch_bf16[(layer, t)]
            if torch_bf16_err.get((layer, t)):
                err["torch bf16"] = torch_bf16_err[(layer, t)]
            for rnd in range(args.rounds):
                for name, extra in LOWP_NOVA:
                    try:
                        j = run_nova(args.build, layer, t, extra + (["--check"] if rnd == 0 else []))
                    except RuntimeError as e:  # e.g. --calibrate on a layer whose plan is direct
                        dnnl_notes.setdefault(name, {}).setdefault(str(e), set()).add(layer_name(layer))
                        continue
                    other = not_as_asked(extra, j)
                    if other:  # said under the table, left out of it
                        dnnl_notes.setdefault(name, {}).setdefault(other, set()).add(layer_name(layer))
                        continue
                    cpu[name] = best(cpu.get(name), j.get(tkey))
                    if rnd == 0:
                        err[name], path[name] = j.get("rel_l2_error"), j.get("gemm_path")
                for name, alg, dtype in LOWP_ONEDNN:
                    o = run_onednn(args.build, layer, t, alg, dtype, check=rnd == 0)
                    if not (o and o.get("created")):
                        dnnl_notes.setdefault(name, {}).setdefault(onednn_why(o), set()).add(layer_name(layer))
                    else:
                        cpu[name] = best(cpu.get(name), o.get(tkey))
                        if rnd == 0:
                            dnnl_checks[name] = {k: o[k] for k in ("rel_l2_error", "check_s8", "check_u8", "check_why")
                                                 if k in o}
                            e = o.get("rel_l2_error", o.get("check_s8", o.get("check_u8", {})).get("rel_l2_error"))
                            if e is not None:
                                err[name] = e
            nc = ncnn_res[(layer, t)]
            for name, _ in LOWP_NCNN:
                nc_ms = nc["wall_ms" if args.wall else "cpu_ms"]
                if nc_ms.get(name):
                    cpu[name] = nc_ms[name]
                if nc["rel_l2_error"].get(name):
                    err[name] = nc["rel_l2_error"][name]
                if nc["why"].get(name):
                    ncnn_notes.setdefault(name, nc["why"][name])
            ratio = {n: cpu[p] / cpu[n] for n, p in LOWP_NCNN_RATIO if cpu.get(n) and cpu.get(p)}
            dnnl_ratio = {n: cpu[p] / cpu[n] for n, p in LOWP_DNNL_RATIO if cpu.get(n) and cpu.get(p)}
            dnnl_direct_ratio = {n: cpu[p] / cpu[n] for n, p in LOWP_DNNL_DIRECT_RATIO if cpu.get(n) and cpu.get(p)}
            # nova's FP32 engine (FP32 tensors, NCHW) over each 16-bit path: issue 6's "1.3x nova's FP32".
            over_fp32 = {n: cpu["fp32"] / cpu[n] for n in ("bf16", "bf16 io", "bf16 io 16c", "fp16", "fp16 io",
                                                           "fp16 16c")
                         if cpu.get("fp32") and cpu.get(n)}
            rows.append({"layer": list(layer), "threads": t, "clock": "wall" if args.wall else "process cpu",
                         ("wall_ms" if args.wall else "cpu_ms"): cpu, "rel_l2_error": err, "gemm_path": path,
                         "ncnn_over_nova": ratio, "fp32_over_nova": over_fp32, "onednn_checks": dnnl_checks,
                         "onednn_over_nova": dnnl_ratio, "onednn_direct_over_nova": dnnl_direct_ratio,
                         "not_measured": {n: w for n, whys in dnnl_notes.items() for w, ls in whys.items()
                                          if layer_name(layer) in ls},
                         "ncnn": {"wall_ms": nc["wall_ms"], "why": nc["why"] or ({"all": ncnn_why} if ncnn_why else {}),
                                  "fp32io_cpu_ms": nc["fp32io_cpu_ms"],
                                  "fp32io_rel_l2_error": nc["fp32io_rel_l2_error"]}})
            names = ([n for n, _ in LOWP_NOVA] + [n for n, _, _ in LOWP_ONEDNN] + ["torch bf16"] +
                     [n for n, _ in LOWP_NCNN])

            def cell(n):
                if cpu.get(n):
                    return f"{cpu[n]:11.3f}"
                return f"{'n/a':>11}" if nc["why"].get(n) else f"{'-':>11}"
            if len(rows) == 1:
                print(f"{'layer':>18} {'T':>2} | " + " ".join(f"{n:>11}" for n in names))
            print(f"{'x'.join(map(str, layer[:4])) + '->' + str(layer[4]):>18} {t:>2} | " + " ".join(map(cell, names)))
            print(f"{'rel L2 error':>21} | " + " ".join(f"{err[n]:11.1e}" if err.get(n) else f"{'':>11}"
                                                      for n in names))
            u8 = {n: c["check_u8"]["rel_l2_error"] for n, c in dnnl_checks.items() if "check_u8" in c}
            if u8:  # oneDNN's two int8 algorithms on one input it can take (u8): what its Winograd costs
                print(f"{'oneDNN int8, u8 data':>21} | " + ", ".join(f"{n} {v:.1e}" for n, v in u8.items()) +
                      "  (input (x+1)/2 as u8 codes; the error row above: s8 codes of x where oneDNN takes them)")
            if over_fp32:
                print(f"{'nova fp32 / nova':>21} | " + " ".join(
                    f"{over_fp32[n]:11.2f}" if n in over_fp32 else f"{'':>11}" for n in names))
            for label, r in (("ncnn / nova", ratio), ("oneDNN / nova", dnnl_ratio),
                             ("oneDNN int8 d / nova", dnnl_direct_ratio)):
                if r:
                    print(f"{label:>21} | " + " ".join(f"{r[n]:11.2f}" if n in r else f"{'':>11}" for n in names))
    for name, why in ncnn_notes.items():
        print(f"{name}: n/a: {why}")
    for name, whys in dnnl_notes.items():
        for why, layers in whys.items():
            print(f"{name}: not measured ({why}): " + ("every layer" if len(layers) == len(LAYERS)
                                                      else ", ".join(sorted(layers))))
    return rows


def harness_fp32(build, layer, kernel_tile, points):
    """The error harness's fp32 preset on the same layer shape (its own uniform data): measured
    emulation and first-order prediction, for the same transform."""
    cmd = [os.path.join(build, "nova"), "error", "--tile", kernel_tile, "--points", points, "--precision", "fp32",
           "--data", "uniform", "--layer", shape_text(layer), "--format", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, None
    res = json.loads(r.stdout)["results"][0]
    return res.get("rel_l2"), res.get("first_order_prediction")


def errors_table(build):
    """Relative L2 error against the float64 reference, per tile, next to nova's FP32 direct path and
    to what the error harness's fp32 preset measures and predicts for the same transform. Returns the rows and
    notes on what has no figure (a oneDNN algorithm without a primitive here, a harness run that failed)."""
    rows, notes = [], []
    for kernel, layer, tiles in ((3, (1, 64, 56, 56, 64), ["2,3", "4,3", "6,3", "7,3", "8,3"]),
                                 (5, (1, 32, 28, 28, 32), ["2,5", "4,5"])):
        extra = ["--kernel", str(kernel), "--check", "--repeat", "1"]
        d = run_nova(build, layer, 2, extra + ["--algorithm", "direct"])
        rows.append({"layer": shape_text(layer), "kernel": kernel, "tile": "direct", "rel_l2": d["rel_l2_error"],
                     "vs_direct": 1.0, "harness_fp32": None, "first_order": None})
        if kernel == 3:
            # oneDNN's FP32 direct and Winograd on the same data. Its Winograd picks its own tile: F(2,3)
            # (wino_2x3) at batch 1 on this machine, F(4,3) (wino_4x3) at batch 8, so batch 8 too.
            for alg, lay in (("direct", layer), ("winograd", layer), ("winograd", (8,) + layer[1:])):
                o = run_onednn(build, lay, 2, alg, check=True)
                if not (o and o.get("rel_l2_error") is not None):
                    notes.append(f"oneDNN {alg} on {shape_text(lay)}: not measured ("
                                 f"{onednn_why(o) if not (o and o.get('created')) else 'no error reported'})")
                else:
                    rows.append({"layer": shape_text(lay), "kernel": kernel, "tile": "oneDNN " + alg[0],
                                 "rel_l2": o["rel_l2_error"], "vs_direct": o["rel_l2_error"] / d["rel_l2_error"],
                                 "harness_fp32": None, "first_order": None, "points": o.get("impl", "")})
        for t in tiles:
            j = run_nova(build, layer, 2, extra + ["--tile", t])
            h, fo = harness_fp32(build, layer, t, j["transform"])
            if h is None:
                notes.append(f"error harness on {shape_text(layer)} {j['tile']}: nova error failed, no figure")
            rows.append({"layer": shape_text(layer), "kernel": kernel, "tile": j["tile"], "points": j["transform"],
                         "rel_l2": j["rel_l2_error"], "vs_direct": j["rel_l2_error"] / d["rel_l2_error"],
                         "harness_fp32": h, "first_order": fo})
    return rows, notes


def fmt_ms(v):
    return "-" if v is None else f"{v:8.3f}"


def check_args(ap, args):
    """Refuse what would crash mid-run, run nothing, or be ignored."""
    try:
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        ap.error(f"--threads wants comma-separated thread counts, got {args.threads!r}")
    if any(t < 1 for t in threads):
        ap.error(f"--threads: every thread count must be 1 or more, got {args.threads!r}")
    if args.rounds < 1:
        ap.error(f"--rounds must be 1 or more, got {args.rounds}")
    if args.wall and not args.lowp:
        ap.error("--wall is for the --lowp table (the FP32 table prints wall and process CPU times both)")
    if args.errors and args.lowp:
        ap.error("--errors is for the FP32 table; --lowp prints its own error rows")
    nova = os.path.join(args.build, "nova")
    if not (os.path.isfile(nova) and os.access(nova, os.X_OK)):
        ap.error(f"no nova executable in --build {args.build!r} ({nova})")
    script_checks.require_writable(ap, "--json", args.json)  # before the run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="nova build directory (with nova and nova_peer_onednn)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--errors", action="store_true", help="also print the error-per-tile table")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--lowp", action="store_true",
                    help="only the low-precision table: nova fp32/bf16/int8/fp16 beside oneDNN bf16/int8, "
                         "torch bf16 and ncnn int8/bf16")
    ap.add_argument("--wall", action="store_true",
                    help="--lowp: median wall ms instead of process CPU ms (for several threads on a quiet machine)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.worker:
        check_args(ap, args)
    if args.worker:
        configs = [(tuple(l), t) for l, t in json.loads(sys.stdin.read())]
        if args.worker == "torch":
            out = worker_torch(configs)
        elif args.worker in ("torch_bf16", "torch_bf16_check"):  # PyTorch's bfloat16 conv2d (oneDNN inside)
            out = worker_torch(configs, "bfloat16", check=args.worker == "torch_bf16_check")
        elif args.worker in ("ncnn_lowp", "ncnn_lowp_check"):  # ncnn int8 and bf16 (bench/peers/ncnn_lowp.py)
            out = worker_ncnn_lowp(configs, check=args.worker == "ncnn_lowp_check")
        else:
            out = worker_ncnn(configs)
        print(json.dumps(out))
        return

    try:
        run(args)
    except RuntimeError as e:  # nova failed: its message, not a traceback
        sys.exit(f"peer_bench.py: {e}")


def run(args):
    if args.lowp:
        rows = lowp_table(args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"lowp": rows}, f, indent=2)
        return
    results, missing = measure(args)
    print(machine_line(f"FP32 convolutions, 3x3, padding 1; median wall ms per execute, best of {args.rounds} "
                       f"round(s); ratio, 16c: the best peer's time over nova's on NCHW and on NCHW16c tensors "
                       f"(above 1: nova is faster)"))
    head = (f"{'layer':>18} {'T':>2} | {'nova ms':>8} {'GFLOP/s':>7} {'nova algorithm':>16} {'nova 16c':>8} | "
            f"{'oneDNN d':>8} {'oneDNN w':>8} {'ncnn':>8} {'torch':>8} | {'best peer':>9} {'ratio':>6} {'16c':>6}")
    print(head)
    print("-" * len(head))
    table = []
    for (layer, t), r in results.items():
        peers = {k: r[k] for k in ("onednn_direct", "onednn_winograd", "ncnn", "torch") if r[k] is not None}
        best_name, best_ms = (min(peers.items(), key=lambda kv: kv[1]) if peers else ("-", None))
        info = r["nova_info"]
        alg = info["algorithm"] + (" " + info["tile"] if info["tile"] else "")
        ratio = best_ms / r["nova"] if best_ms else None
        ratio16 = best_ms / r["nova_16c"] if best_ms and r.get("nova_16c") else None
        gf = flops(layer) / (r["nova"] * 1e6)
        print(f"{'x'.join(map(str, layer[:4])) + '->' + str(layer[4]):>18} {t:>2} | {fmt_ms(r['nova'])} {gf:7.0f} "
              f"{alg:>16} {fmt_ms(r.get('nova_16c'))} | {fmt_ms(r['onednn_direct'])} {fmt_ms(r['onednn_winograd'])} "
              f"{fmt_ms(r['ncnn'])} {fmt_ms(r['torch'])} | {best_name:>9.9} {('-' if ratio is None else f'{ratio:6.2f}')} "
              f"{('-' if ratio16 is None else f'{ratio16:6.2f}')}")
        row = {"layer": list(layer), "threads": t, "nova_ms": r["nova"], "nova_16c_ms": r.get("nova_16c"),
               "ratio_16c_vs_best_peer": ratio16, "nova_gflops": gf, "nova_algorithm": alg,
               "onednn_direct_ms": r["onednn_direct"], "onednn_winograd_ms": r["onednn_winograd"],
               "onednn_winograd_impl": r["onednn_winograd_impl"], "ncnn_ms": r["ncnn"], "torch_ms": r["torch"],
               "best_peer": best_name, "ratio_vs_best_peer": ratio}
        for k in ("onednn_direct", "onednn_winograd", "ncnn", "torch"):
            row[k + "_gflops"] = None if r[k] is None else flops(layer) / (r[k] * 1e6)
        table.append(row)
    # One thread, process CPU time per execute: on a shared machine the steadier comparison (it leaves
    # out the time a process waits for a core; with one thread there is no OpenMP spinning in it).
    if any(t == 1 for _, t in results):
        print("\none thread, process CPU time per execute (ms); ratio: the best peer's time over nova's "
              "(above 1: nova is faster)")
        print(f"{'layer':>18} | {'nova':>8} {'oneDNN d':>8} {'oneDNN w':>8} {'ncnn':>8} {'torch':>8} | {'ratio':>6}")
    else:
        print("\n(no one-thread process CPU table: --threads has no 1)")
    for (layer, t), r in results.items():
        if t != 1:
            continue
        c = r["cpu"]
        peers = [c[k] for k in ("onednn_direct", "onednn_winograd", "ncnn", "torch") if c.get(k)]
        ratio = min(peers) / c["nova"] if peers and c.get("nova") else None
        name = 'x'.join(map(str, layer[:4])) + '->' + str(layer[4])
        print(f"{name:>18} | {fmt_ms(c.get('nova'))} {fmt_ms(c.get('onednn_direct'))} {fmt_ms(c.get('onednn_winograd'))} "
              f"{fmt_ms(c.get('ncnn'))} {fmt_ms(c.get('torch'))} | {('-' if ratio is None else f'{ratio:6.2f}')}")
        for row in table:
            if tuple(row["layer"]) == layer and row["threads"] == 1:
                row["cpu_ms"] = dict(c)
                row["cpu_ratio_vs_best_peer"] = ratio
    for name, why in missing.items():
        if isinstance(why, dict):  # oneDNN: {why: layers}
            for w, layers in why.items():
                print(f"peer {name} not measured ({w}): " + ("every layer" if len(layers) == len(LAYERS)
                                                            else ", ".join(layers)))
        else:
            print(f"peer {name} missing: {why}")
    out = {"layers": table, "missing": missing}
    if args.errors:
        rows, notes = errors_table(args.build)
        print("\nrelative L2 error vs float64 reference (input uniform in [-1,1], weights uniform in [-0.1,0.1], bias in [-1,1]; 2 threads)")
        print(f"{'layer':>16} {'tile':>8} {'rel L2':>10} {'x direct':>8} {'harness':>10} {'1st-order':>10}  points")
        for e in rows:
            h = "-" if e["harness_fp32"] is None else f"{e['harness_fp32']:10.3e}"
            fo = "-" if e["first_order"] is None else f"{e['first_order']:10.3e}"
            print(f"{e['layer']:>16} {e['tile']:>8} {e['rel_l2']:10.3e} {e['vs_direct']:8.1f} {h:>10} {fo:>10}  "
                  f"{e.get('points', '')}")
        for n in notes:
            print(n)
        out["errors"], out["errors_not_measured"] = rows, notes
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
