"""Session 24: the direct path's NHWC GEMM reading inside pixels' kernel rows in place (segments) against
the im2col copy: ResNet-18's direct layers and a few more, two nova binaries interleaved (the order
alternating per repetition), 2 threads, NHWC and NCHW. Prints min / median of the repetitions' median_ms
and new over old (medians).

  python3 ab_direct_rows.py REPS OLD NEW
"""
import json, statistics, subprocess, sys

LAYERS = [
    ("1,3,224,224,64", ["--kernel", "7", "--stride", "2", "--pad", "3"]),  # ResNet's stem
    ("1,64,56,56,128", ["--stride", "2"]),
    ("1,128,28,28,256", ["--stride", "2"]),
    ("1,256,14,14,512", ["--stride", "2"]),
    ("1,64,56,56,128", ["--stride", "2", "--kernel", "1", "--pad", "0"]),
    ("1,3,224,224,64", []),  # VGG's first layer, 3x3 stride 1 (the automatic choice)
    ("1,32,112,112,64", ["--algorithm", "direct"]),
    ("8,64,56,56,64", ["--stride", "2", "--kernel", "5", "--pad", "2"]),
]
reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]


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
        print(f"{shape:>16} {' '.join(extra):>26} {layout}: old {min(t['old']):.4f}/{mo:.4f}  "
              f"new {min(t['new']):.4f}/{mn:.4f} ({mn / mo:.2f})", flush=True)
