"""Session 22: the direct-path A/B runs, one script: a set of layers timed with two binaries interleaved
(the order alternating per repetition), 2 threads, NHWC and NCHW. Prints min / median of the repetitions'
median_ms and new over old (medians).

  python3 ab_layers.py REPS OLD NEW SET [N,C,H,W,K ...]

SET: prefetch or parts (deep stride-2 layers, 1x1 shortcut, forced direct: the direct GEMM's W prefetch,
not kept, and its output-channel parts), depthwise (MobileNet-like 3x3 depthwise layers at stride 1 and 2;
shapes after SET replace its default list).
"""
import json, statistics, subprocess, sys

DEEP = [  # shape, extra arguments
    ("1,256,14,14,512", ["--stride", "2"]),  # ResNet-18's last stage entry (224x224 input): 49 pixels
    ("1,256,14,14,512", ["--stride", "2", "--kernel", "1", "--pad", "0"]),  # its 1x1 downsample
    ("1,128,28,28,256", ["--stride", "2"]),  # 196 pixels: 4 blocks
    ("1,512,14,14,512", ["--stride", "2"]),
    ("1,512,7,7,512", ["--algorithm", "direct"]),
    ("8,256,14,14,512", ["--stride", "2"]),  # 392 pixels: no parts (control)
]
DEPTHWISE = ["1,1024,7,7,1024", "1,512,7,7,512", "1,512,14,14,512", "1,256,14,14,256", "8,256,14,14,256",
             "1,128,28,28,128", "1,64,56,56,64", "1,32,112,112,32"]


def depthwise(shapes):
    return [(shape, ["--groups", shape.split(",")[1], *stride]) for shape in shapes for stride in ([], ["--stride", "2"])]


reps, old, new, which = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
layers = DEEP if which in ("prefetch", "parts") else depthwise(sys.argv[5:] or DEPTHWISE)


def run(binary, shape, extra, layout):
    r = subprocess.run([binary, "bench", "conv", "--shape", shape, "--threads", "2", "--layout", layout,
                        "--format", "json", *extra], capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout)["median_ms"] if r.returncode == 0 else None


for shape, extra in layers:
    for layout in ("nhwc", "nchw"):
        t = {"old": [], "new": []}
        for rep in range(reps):
            for name in (["old", "new"] if rep % 2 == 0 else ["new", "old"]):
                v = run(old if name == "old" else new, shape, extra, layout)
                if v is not None:
                    t[name].append(v)
        mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
        print(f"{shape:>16} {' '.join(extra):>18} {layout}: old {min(t['old']):.4f}/{mo:.4f}  "
              f"new {min(t['new']):.4f}/{mn:.4f} ({mn / mo:.2f})", flush=True)
