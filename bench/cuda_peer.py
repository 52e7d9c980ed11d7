"""nova's CUDA multi-pass Winograd against PyTorch's conv2d (cuDNN) on the same GPU, interleaved: every
repetition times each column once, layer by layer. Prints per layer the median device time of each column,
the speed-ups (PyTorch's time over nova's) from the medians, and the errors against float64.

  python3 bench/cuda_peer.py [--nova build/nova] [--reps 3] [--repeat 50] [--json out.json]
  python3 bench/cuda_peer.py --smoke        # no GPU: one small layer, nova emulated, PyTorch on the CPU

Columns:
  nova fp32     `nova cuda conv` (default tile: F(6,3) for 3x3), FP32 input and output tensors
  nova fp16     the same with fp16 tensors (`--io fp16`)
  torch fp32    torch.nn.functional.conv2d, float32, TF32 off (cuDNN's FP32 algorithms)
  torch tf32    float32 with TF32 allowed (tensor cores, inputs rounded to 10-bit mantissas)
  torch fp16    float16 tensors (tensor cores, FP32 or fp16 accumulation as cuDNN chooses)
Times: nova's median over --repeat executes, each timed by CUDA events on the default stream (the four
passes, the max over the input included); PyTorch's likewise (torch.backends.cudnn.benchmark on, warmed up).
Errors: relative L2 against a float64 direct convolution; nova's on its CLI's data (input and bias uniform
in [-1, 1], weights in [-0.1, 0.1]), PyTorch's on data of the same distribution, from the first repetition.
nova's V and U are fp16, as cuDNN's fp16 operands are, so "torch fp16 / nova fp32" compares the like
arithmetic, and "torch fp32 / nova fp32" is what a user of FP32 tensors gains in time and gives up in
accuracy. Accuracy differs with the tile: on an H200 (session 47) nova's F(6,3) had 12-14x cuDNN fp16's
error, its F(2,3) about the same (docs/cuda.md, "On an H200"); the error table prints it for every layer.
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
          (1, 64, 224, 224, 64),
          # a GPU's size of batch
          (32, 64, 56, 56, 64), (32, 128, 28, 28, 128), (32, 256, 14, 14, 256), (32, 512, 7, 7, 512)]
SMOKE_LAYERS = [(1, 8, 12, 12, 8)]
NOVA = [("nova fp32", "fp32"), ("nova fp16", "fp16")]
TORCH = ["torch fp32", "torch tf32", "torch fp16"]
PAIRS = [("nova fp32", "torch fp32"), ("nova fp32", "torch tf32"), ("nova fp32", "torch fp16"),
         ("nova fp16", "torch fp16")]


def shape_text(layer):
    return ",".join(map(str, layer))


def nova_run(args, layer, io, check):
    cmd = [args.nova, "cuda", "conv", "--shape", shape_text(layer), "--io", io, "--format", "json",
           "--repeat", str(args.repeat)]
    if args.smoke:
        cmd.append("--emulate")
    elif check:
        cmd.append("--check")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"cuda_peer: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    j = json.loads(r.stdout)
    return j["median_ms"], j.get("rel_l2_error"), j["tile"], j["stats"]["output_nonfinite"]


class TorchLayer:
    """One layer's data on the device and its float64 reference; times conv2d in each column's type."""

    def __init__(self, torch, layer, device, seed):
        n, c, h, w, k = layer
        g = torch.Generator().manual_seed(seed)
        self.torch, self.device = torch, device
        self.x = (torch.rand(n, c, h, w, generator=g, dtype=torch.float64) * 2 - 1).to(device)
        self.w = ((torch.rand(k, c, 3, 3, generator=g, dtype=torch.float64) * 2 - 1) * 0.1).to(device)
        self.b = (torch.rand(k, generator=g, dtype=torch.float64) * 2 - 1).to(device)
        self.ref = None

    def args_for(self, column):
        dtype = self.torch.float16 if column == "torch fp16" else self.torch.float32
        if self.device == "cpu" and dtype == self.torch.float16:
            dtype = self.torch.bfloat16  # the smoke run: CPU half convolutions may be missing
        return self.x.to(dtype), self.w.to(dtype), self.b.to(dtype)

    def run(self, column, repeat):
        torch = self.torch
        F = torch.nn.functional
        torch.backends.cuda.matmul.allow_tf32 = column == "torch tf32"
        torch.backends.cudnn.allow_tf32 = column == "torch tf32"
        x, w, b = self.args_for(column)
        with torch.no_grad():
            y = F.conv2d(x, w, b, padding=1)  # warm-up (and cuDNN's algorithm search)
            times = []
            if self.device == "cpu":
                import time
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    F.conv2d(x, w, b, padding=1)
                    times.append((time.perf_counter() - t0) * 1e3)
            else:
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for _ in range(repeat):
                    start.record()
                    F.conv2d(x, w, b, padding=1)
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop))
        return statistics.median(times), y

    def error(self, y):
        torch = self.torch
        if self.ref is None:
            with torch.no_grad():
                self.ref = torch.nn.functional.conv2d(self.x, self.w, self.b, padding=1)
        return float(torch.linalg.vector_norm(y.double() - self.ref) / torch.linalg.vector_norm(self.ref))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nova", default="build/nova", help="the nova CLI (built with CUDA)")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions")
    ap.add_argument("--repeat", type=int, default=50, help="timed executes per column and repetition")
    ap.add_argument("--layers", default="", help="N,C,H,W,K;... (default: the layer set above)")
    ap.add_argument("--json", default="", help="write every time and error here")
    ap.add_argument("--smoke", action="store_true",
                    help="no GPU: one small layer, nova emulated on the host, PyTorch on the CPU (checks the script)")
    args = ap.parse_args()
    script_checks.require_at_least(ap, ("--reps", args.reps, 1), ("--repeat", args.repeat, 1))
    script_checks.require_writable(ap, "--json", args.json)
    if not os.access(args.nova, os.X_OK):
        ap.error(f"--nova: {args.nova!r} is not an executable (build it first)")
    import torch
    device = "cpu" if args.smoke else "cuda"
    if not args.smoke and not torch.cuda.is_available():
        ap.error("PyTorch sees no CUDA device here (--smoke checks the script without one)")
    layers = SMOKE_LAYERS if args.smoke else LAYERS
    if args.layers:
        layers = [tuple(int(v) for v in item.split(",")) for item in args.layers.split(";")]
    where = "smoke run: nova emulated on the host, PyTorch on the CPU (no GPU times)" if args.smoke else \
        f"{torch.cuda.get_device_name(0)}, PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}"
    print(f"cuda_peer: {where}; {args.reps} repetitions of {args.repeat} executes, median ms", flush=True)
    torch.backends.cudnn.benchmark = True

    times = {(layer, col): [] for layer in layers for col in [c for c, _ in NOVA] + TORCH}
    errors, tiles = {}, {}
    for rep in range(args.reps):
        for li, layer in enumerate(layers):
            for col, io in NOVA:
                ms, err, tile, nonfinite = nova_run(args, layer, io, rep == 0)
                times[(layer, col)].append(ms)
                if rep == 0:
                    errors[(layer, col)], tiles[layer] = err, tile
                    if nonfinite:
                        print(f"  {shape_text(layer)} {col}: {nonfinite} NaN/Inf outputs", flush=True)
            data = TorchLayer(torch, layer, device, seed=li)
            for col in TORCH:
                ms, y = data.run(col, args.repeat)
                times[(layer, col)].append(ms)
                if rep == 0:
                    errors[(layer, col)] = data.error(y)
            del data
            if device == "cuda":
                torch.cuda.empty_cache()
        print(f"  repetition {rep + 1} of {args.reps} done", flush=True)

    cols = [c for c, _ in NOVA] + TORCH
    print("\n| layer | tile | " + " | ".join(f"{c} ms" for c in cols) + " | " +
          " | ".join(f"{t} / {n}" for n, t in PAIRS) + " |")
    print("|" + "---|" * (2 + len(cols) + len(PAIRS)))
    for layer in layers:
        med = {c: statistics.median(times[(layer, c)]) for c in cols}
        ratios = [med[t] / med[n] for n, t in PAIRS]
        print(f"| {'x'.join(map(str, layer[:4]))}->{layer[4]} | {tiles[layer]} | " +
              " | ".join(f"{med[c]:.4f}" for c in cols) + " | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    print("\nrelative L2 error against float64 (first repetition):")
    print("| layer | " + " | ".join(cols) + " |")
    print("|" + "---|" * (1 + len(cols)))
    for layer in layers:
        print(f"| {'x'.join(map(str, layer[:4]))}->{layer[4]} | " +
              " | ".join("-" if errors[(layer, c)] is None else f"{errors[(layer, c)]:.2e}" for c in cols) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"where": where, "reps": args.reps, "repeat": args.repeat,
                       "layers": [{"layer": list(layer), "tile": tiles[layer],
                                   "times_ms": {c: times[(layer, c)] for c in cols},
                                   "rel_l2_error": {c: errors[(layer, c)] for c in cols}} for layer in layers]},
                      f, indent=1)


if __name__ == "__main__":
    main()
