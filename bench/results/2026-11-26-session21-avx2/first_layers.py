"""Session 21: the direct path's layers beside PyTorch's conv2d, interleaved, 2 threads, FP32.
  .venv/bin/python first_layers.py [nova_binary] [reps]
nova: `nova bench conv` median_ms (NCHW and NHWC tensors); PyTorch: median of 30 calls after 5 warm-ups
(NCHW and channels_last). Prints each repetition's medians' median and PyTorch / nova."""
import json, statistics, subprocess, sys, time

import torch

nova = sys.argv[1] if len(sys.argv) > 1 else "build/nova"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
torch.set_num_threads(2)
layers = [  # (name, N, C, H, W, K, kernel, stride, pad)
    ("1x3x224x224->64 3x3", 1, 3, 224, 224, 64, 3, 1, 1),
    ("1x3x224x224->64 7x7 s2", 1, 3, 224, 224, 64, 7, 2, 3),
    ("1x3x224x224->32 3x3 s2", 1, 3, 224, 224, 32, 3, 2, 1),
    ("1x32x56x56->64 3x3 s2", 1, 32, 56, 56, 64, 3, 2, 1),
]


def nova_ms(l, layout):
    _, n, c, h, w, k, r, s, p = l
    out = subprocess.run([nova, "bench", "conv", "--shape", f"{n},{c},{h},{w},{k}", "--kernel", str(r), "--stride",
                          str(s), "--pad", str(p), "--layout", layout, "--threads", "2", "--format", "json"],
                         capture_output=True, text=True, timeout=300)
    j = json.loads(out.stdout)
    return j["median_ms"], j["algorithm"]


def torch_ms(l, channels_last):
    _, n, c, h, w, k, r, s, p = l
    x = torch.randn(n, c, h, w)
    wt = torch.randn(k, c, r, r)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
        wt = wt.contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        for _ in range(5):
            torch.nn.functional.conv2d(x, wt, stride=s, padding=p)
        ts = []
        for _ in range(30):
            t = time.perf_counter()
            torch.nn.functional.conv2d(x, wt, stride=s, padding=p)
            ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {reps} interleaved repetitions")
for l in layers:
    t = {"nova nchw": [], "nova nhwc": [], "torch nchw": [], "torch cl": []}
    algo = ""
    for _ in range(reps):
        ms, algo = nova_ms(l, "nchw")
        t["nova nchw"].append(ms)
        t["torch nchw"].append(torch_ms(l, False))
        t["nova nhwc"].append(nova_ms(l, "nhwc")[0])
        t["torch cl"].append(torch_ms(l, True))
    m = {k: statistics.median(v) for k, v in t.items()}
    print(f"{l[0]:24s} nova({algo}) nchw {m['nova nchw']:.3f} nhwc {m['nova nhwc']:.3f} | torch nchw "
          f"{m['torch nchw']:.3f} channels_last {m['torch cl']:.3f} | torch/nova: nchw "
          f"{m['torch nchw'] / m['nova nchw']:.2f}, nhwc vs channels_last {m['torch cl'] / m['nova nhwc']:.2f}",
          flush=True)
