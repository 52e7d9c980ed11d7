"""Session 22: the direct path's GEMM prefetching the next panel of W where W is larger than L2, against
the binary before it; interleaved, 2 threads, NHWC and NCHW. Prints min / median of the repetitions'
median_ms and new over old (medians).

  python3 ab_direct_prefetch.py REPS OLD NEW
"""
import json, statistics, subprocess, sys

reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
LAYERS = [  # shape, extra arguments
    ("1,256,14,14,512", ["--stride", "2"]),  # ResNet-18's last stage entry (224x224 input)
    ("8,256,14,14,512", ["--stride", "2"]),
    ("1,512,14,14,512", ["--stride", "2"]),
    ("1,512,7,7,512", ["--algorithm", "direct"]),
    ("1,128,28,28,256", ["--stride", "2"]),  # W of 1.2 MB: not prefetched (control)
]


def run(binary, shape, extra, layout):
    r = subprocess.run([binary, "bench", "conv", "--shape", shape, "--threads", "2", "--layout", layout,
                        "--format", "json", *extra], capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout)["median_ms"] if r.returncode == 0 else None


for shape, extra in LAYERS:
    for layout in ("nhwc", "nchw"):
        t = {"old": [], "new": []}
        for rep in range(reps):
            for name in (["old", "new"] if rep % 2 == 0 else ["new", "old"]):
                v = run(old if name == "old" else new, shape, extra, layout)
                if v is not None:
                    t[name].append(v)
        mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
        print(f"{shape:>16} {' '.join(extra):>18} {layout}: old {min(t['old']):.3f}/{mo:.3f}  "
              f"new {min(t['new']):.3f}/{mn:.3f} ({mn / mo:.2f})", flush=True)
