"""Session 20: depthwise and grouped convolutions (the direct path) of two nova binaries and PyTorch's conv2d,
2 threads, interleaved: python3 ab_depthwise.py reps old=binary,new=binary (run with .venv/bin/python)"""
import json, statistics, subprocess, sys, time
reps = int(sys.argv[1]); bins = dict(x.split("=") for x in sys.argv[2].split(","))
cases = [((1, 64, 56, 56, 64), 64, 3, 1), ((1, 128, 28, 28, 256), 128, 3, 1), ((8, 256, 14, 14, 256), 256, 3, 2),
         ((1, 40, 56, 56, 40), 40, 5, 1), ((1, 64, 56, 56, 64), 4, 3, 1)]
try:
    import torch, torch.nn.functional as F
    torch.set_num_threads(2)
except ImportError:
    torch = None
def torch_ms(layer, groups, k, stride):
    n, c, h, w, kk = layer
    x = torch.rand(n, c, h, w); wt = torch.rand(kk, c // groups, k, k); b = torch.rand(kk)
    for _ in range(10): F.conv2d(x, wt, b, stride=stride, padding=k // 2, groups=groups)
    ts = []
    for _ in range(100):
        t0 = time.perf_counter(); F.conv2d(x, wt, b, stride=stride, padding=k // 2, groups=groups)
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)
for layer, groups, k, stride in cases:
    for layout in ["nchw", "nhwc", "nchw16c"]:
        t = {b: [] for b in bins}
        for r in range(reps):
            for b in (list(bins)[r % 2:] + list(bins)[:r % 2]):
                out = subprocess.run([bins[b], "bench", "conv", "--shape", ",".join(map(str, layer)), "--groups", str(groups),
                                      "--kernel", str(k), "--stride", str(stride), "--layout", layout, "--threads", "2",
                                      "--format", "json"], capture_output=True, text=True)
                t[b].append(json.loads(out.stdout)["median_ms"])
        base = statistics.median(t[list(bins)[0]])
        tm = f"  torch (nchw) {torch_ms(layer, groups, k, stride):.3f}" if torch and layout == "nchw" else ""
        print(f"{'x'.join(map(str, layer))} g{groups} k{k} s{stride} {layout:>7}: " +
              "  ".join(f"{b} {min(v):.3f}/{statistics.median(v):.3f} ({statistics.median(v) / base:.3f})" for b, v in t.items()) + tm, flush=True)
