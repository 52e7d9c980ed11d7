"""Session 23: the depthwise runs form (NHWC and NCHW16c) against the per-pixel form it replaced: MobileNet-like
3x3 depthwise layers at stride 1 and 2, two `nova` binaries interleaved (the order alternating per
repetition), 2 threads, in NHWC, NCHW16c and NCHW (NCHW: unchanged, a control). Prints min / median of the
repetitions' median_ms and new over old (medians).

  python3 ab_depthwise_layouts.py REPS OLD NEW [N,C,H,W,K ...]
"""
import json, statistics, subprocess, sys

SHAPES = ["1,1024,7,7,1024", "1,512,14,14,512", "1,256,28,28,256", "8,256,14,14,256", "1,128,56,56,128",
          "1,64,112,112,64", "1,32,112,112,32"]
reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
shapes = sys.argv[4:] or SHAPES


def run(binary, shape, extra, layout):
    r = subprocess.run([binary, "bench", "conv", "--shape", shape, "--threads", "2", "--layout", layout,
                        "--format", "json", *extra], capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout)["median_ms"] if r.returncode == 0 else None


for shape in shapes:
    for stride in ([], ["--stride", "2"]):
        extra = ["--groups", shape.split(",")[1], *stride]
        for layout in ("nhwc", "nchw16c", "nchw"):
            t = {"old": [], "new": []}
            for rep in range(reps):
                for name in (["old", "new"] if rep % 2 == 0 else ["new", "old"]):
                    v = run(old if name == "old" else new, shape, extra, layout)
                    if v is not None:
                        t[name].append(v)
            mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
            print(f"{shape:>16} {' '.join(stride) or 's1':>10} {layout:>7}: old {min(t['old']):.4f}/{mo:.4f}  "
                  f"new {min(t['new']):.4f}/{mn:.4f} ({mn / mo:.2f})", flush=True)
