"""nova's bf16 and int8 Winograd against oneDNN's bf16 direct, int8 Winograd and int8 direct convolutions,
interleaved: every repetition times each column once, layer by layer, so that a machine whose speed drifts
(a shared VM) slows both sides alike. Prints per layer the median and best time of each column and nova's
speed-ups (oneDNN's time over nova's) from the best times and as the median of the per-repetition ratios.

  python3 bench/peer_interleaved.py [--build build] [--threads 2] [--reps 5] [--fp32] [--ncnn] [--json out.json]

Columns: nova bf16 with bf16 tensors in the NCHW16c layout (the peers' timed layout) and in NCHW; oneDNN
bf16 direct (AMX where the CPU has it); nova int8 (calibrated scales, int8 input) in NCHW16c; oneDNN int8
Winograd (u8 input) and int8 direct. nova through `nova bench conv --format json` (median_ms), oneDNN
through build/nova_peer_onednn (median_ms, OMP_NUM_THREADS=threads). Used for docs/engine-log.md, "Session 11".

--ncnn: also ncnn's int8 and bf16 (bench/peers/ncnn_lowp.py through peer_bench.py's worker, one process per
layer and repetition, median wall ms of its executes with its pre-quantized / bf16 packed input and raw output)
and nova's int8-spatial, interleaved with the rest; run it with a Python that has ncnn (the project's .venv).
The per-repetition pairing makes its ratios steadier than peer_bench.py's best-of-rounds CPU times, which
swung 2x from run to run for ncnn on the AVX2 machine (docs/engine-log.md, "Session 18").

--fp32: issue 5's FP32 comparison instead: nova FP32 (automatic tile) on NCHW and on NCHW16c tensors against
oneDNN's FP32 direct and Winograd convolutions (its blocked layouts, reorders outside the timing), and against
the faster of the two in each repetition ("dnnl best"). Used for docs/engine-log.md, "Session 12".
--fp32 --ncnn: also ncnn's FP32 Winograd and PyTorch's FP32 conv2d (peer_bench.py's workers: ncnn with an
unpacked input, packed inside the timing; median wall ms of their executes, one process per layer and
repetition), and "best peer", the fastest of oneDNN's two, ncnn's and PyTorch's in each repetition: issue 5's
target on CPUs where oneDNN has no FP32 Winograd (AVX2). Run it with a Python that has ncnn and torch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation"))
import script_checks  # noqa: E402

LAYERS = [(1, 64, 56, 56, 64), (1, 128, 28, 28, 128), (1, 256, 14, 14, 256), (1, 512, 7, 7, 512),
          (8, 64, 56, 56, 64), (8, 128, 28, 28, 128), (8, 256, 14, 14, 256), (8, 512, 7, 7, 512),
          (1, 64, 224, 224, 64)]
NOVA = [("nova bf16 io 16c", ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"]),
        ("nova bf16 io", ["--dtype", "bf16", "--io", "bf16"]),
        ("nova int8 i8 16c", ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"])]
ONEDNN = [("dnnl bf16 d", "direct", "bf16"), ("dnnl int8 w", "winograd", "int8"), ("dnnl int8 d", "direct", "int8")]
# (nova column, oneDNN column): the speed-ups printed.
PAIRS = [("nova bf16 io 16c", "dnnl bf16 d"), ("nova bf16 io", "dnnl bf16 d"), ("nova int8 i8 16c", "dnnl int8 w"),
         ("nova int8 i8 16c", "dnnl int8 d")]
NOVA_NCNN = [("nova int8sp i8 16c",
              ["--dtype", "int8-spatial", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"])]
PAIRS_NCNN = [("nova int8 i8 16c", "ncnn int8"), ("nova int8sp i8 16c", "ncnn int8"), ("nova bf16 io 16c", "ncnn bf16")]
NOVA_FP32 = [("nova fp32", []), ("nova fp32 16c", ["--layout", "nchw16c"])]
ONEDNN_FP32 = [("dnnl fp32 d", "direct", "f32"), ("dnnl fp32 w", "winograd", "f32")]
PAIRS_FP32 = [("nova fp32", "dnnl best"), ("nova fp32 16c", "dnnl best")]
PAIRS_FP32_NCNN = [("nova fp32", "best peer"), ("nova fp32 16c", "best peer")]


def shape(layer):
    return ",".join(map(str, layer))


def nova(args, layer, extra):
    r = subprocess.run([os.path.join(args.build, "nova"), "bench", "conv", "--shape", shape(layer), "--threads",
                        str(args.threads), "--format", "json", *extra], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:  # e.g. --calibrate on a layer whose plan is direct: a column without a time
        return None, "nova failed: " + r.stderr.strip()
    j = json.loads(r.stdout)
    other = peer_bench().not_as_asked(extra, j)
    if other:  # not this column's time
        return None, other
    return j["median_ms"], j.get("tile") or j.get("algorithm", "")


def onednn(args, layer, algorithm, dtype):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    r = subprocess.run([os.path.join(args.build, "nova_peer_onednn"), "--shape", shape(layer), "--algorithm",
                        algorithm, "--dtype", dtype], capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0:
        return None, "failed: " + r.stderr.strip()
    j = json.loads(r.stdout)
    return (j["median_ms"], j.get("impl", "")) if j.get("created") else (None, "not created")


def peer_bench():
    """The module peer_bench.py beside this one (its workers and checks)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import peer_bench as module
    return module


def peer_worker(name, layer, threads):
    """peer_bench.py's worker `name` on one layer: its result dict, or None and why."""
    out, why = peer_bench().run_worker(name, [(list(layer), threads)])
    return (out[0], "") if out else (None, why or "no result")


def ncnn_fp32(args, layer):
    out, why = peer_worker("ncnn", layer, args.threads)
    return (out["median_ms"], "winograd on") if out else (None, why)


def torch_fp32(args, layer):
    out, why = peer_worker("torch", layer, args.threads)
    return (out["median_ms"], "conv2d") if out else (None, why)


def ncnn_both(args, layer):
    """ncnn's int8 and bf16 median wall ms on the layer (None and why where a kind failed), from one worker."""
    o, why = peer_worker("ncnn_lowp", layer, args.threads)
    if o is None:
        return {k: (None, why) for k in ("int8", "bf16")}
    return {k: (o.get(k + "_ms"), o.get(k + "_why", "")) for k in ("int8", "bf16")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--fp32", action="store_true", help="FP32: nova against oneDNN's FP32 direct and Winograd")
    ap.add_argument("--ncnn", action="store_true", help="also ncnn's int8 and bf16, and nova's int8-spatial")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error(f"--threads must be 1 or more, got {args.threads}")
    if args.reps < 1:
        ap.error(f"--reps must be 1 or more, got {args.reps}")
    if not os.access(os.path.join(args.build, "nova"), os.X_OK):
        ap.error(f"no nova executable in --build {args.build!r}")
    script_checks.require_writable(ap, "--json", args.json)  # before the run
    if not os.path.exists(os.path.join(args.build, "nova_peer_onednn")):
        sys.exit(f"{args.build}/nova_peer_onednn not built (oneDNN not found)")
    nova_cols, onednn_cols, pairs = (NOVA_FP32, ONEDNN_FP32, PAIRS_FP32) if args.fp32 else (NOVA, ONEDNN, PAIRS)
    if args.ncnn and not args.fp32:
        nova_cols, pairs = nova_cols + NOVA_NCNN, pairs + PAIRS_NCNN
    elif args.ncnn:
        pairs = pairs + PAIRS_FP32_NCNN
    columns = [(n, (lambda l, e=e: nova(args, l, e))) for n, e in nova_cols] + \
              [(n, (lambda l, a=a, d=d: onednn(args, l, a, d))) for n, a, d in onednn_cols]
    if args.ncnn and args.fp32:
        columns += [("ncnn fp32", lambda l: ncnn_fp32(args, l)), ("torch fp32", lambda l: torch_fp32(args, l))]
    elif args.ncnn:  # one worker per layer and repetition gives both ncnn columns: the first runs it
        cache = {}

        def ncnn_col(layer, kind):
            if kind == "int8" or layer not in cache:
                cache[layer] = ncnn_both(args, layer)
            return cache[layer][kind]
        columns += [("ncnn int8", lambda l: ncnn_col(l, "int8")), ("ncnn bf16", lambda l: ncnn_col(l, "bf16"))]
    rows = []
    import machine
    print(f"{machine.summary()}; "
          f"{'FP32' if args.fp32 else 'bf16 and int8'} convolutions, 3x3, padding 1, nova's input uniform in [-1, 1]")
    print(f"{args.threads} threads, {args.reps} interleaved repetitions; ms: median (best); speed-up: the peer's time "
          "over nova's (above 1: nova is faster), from the best times / median of the per-repetition ratios")
    for layer in LAYERS:
        times = {n: [] for n, _ in columns}
        what = {}
        for _ in range(args.reps):
            for n, f in columns:
                ms, w = f(layer)
                times[n].append(ms)
                what[n] = w
        ok = {n: v for n, v in times.items() if None not in v}
        # A column with no time in some repetition is left out of the medians and speed-ups: say so, and why.
        dropped = {n: what.get(n) or "no time" for n in times if n not in ok}
        if args.fp32:  # the faster oneDNN algorithm of each repetition
            peers = [ok[n] for n, _, _ in ONEDNN_FP32 if n in ok]
            if peers:
                ok["dnnl best"] = [min(t) for t in zip(*peers)]
            others = [ok[n] for n in ("ncnn fp32", "torch fp32") if n in ok]
            if args.ncnn and others:  # and ncnn's Winograd, PyTorch's conv2d
                ok["best peer"] = [min(t) for t in zip(*(peers + others))]
        speedup = {}
        for a, b in pairs:
            if a in ok and b in ok:
                speedup[f"{b} / {a}"] = {"best": min(ok[b]) / min(ok[a]),
                                         "median_paired": statistics.median(y / x for x, y in zip(ok[a], ok[b]))}
        rows.append({"layer": list(layer), "threads": args.threads, "ms": times, "what": what, "speedup": speedup,
                     "not_measured": dropped})
        name = "x".join(map(str, layer[:4])) + "->" + str(layer[4])
        print(f"{name:>16} | " + "  ".join(f"{n} {statistics.median(v):.3f} ({min(v):.3f})" for n, v in ok.items()))
        print(f"{'':>16} | " + "  ".join(f"{k}: {v['best']:.2f} / {v['median_paired']:.2f}"
                                         for k, v in speedup.items()) +
              f"  [{what.get('dnnl fp32 w' if args.fp32 else 'dnnl bf16 d', '')}; nova {what.get(nova_cols[0][0], '')}]",
              flush=True)
        if dropped:
            print(f"{'':>16} | not measured: " + "; ".join(f"{n} ({w})" for n, w in dropped.items()), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
