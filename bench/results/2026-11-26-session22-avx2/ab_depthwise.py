"""Session 22: depthwise layers (MobileNet-like, 3x3 stride 1 and 2, 7x7 to 112x112) in NCHW and NHWC,
the binary before (OLD) against smaller pixel blocks where a layer has few output pixels and the NCHW
planes form only for output rows of 32 pixels or more (NEW); interleaved, 2 threads. Prints min / median
of the repetitions' median_ms and new over old (medians).

  python3 ab_depthwise.py REPS OLD NEW [N,C,H,W,K ...]   (the layers; default: the list below)
"""
import json, statistics, subprocess, sys

reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
LAYERS = ["1,1024,7,7,1024", "1,512,7,7,512", "1,512,14,14,512", "1,256,14,14,256", "8,256,14,14,256",
          "1,128,28,28,128", "1,64,56,56,64", "1,32,112,112,32"]


def run(binary, shape, extra, layout):
    r = subprocess.run([binary, "bench", "conv", "--shape", shape, "--groups", shape.split(",")[1], "--threads",
                        "2", "--layout", layout, "--format", "json", *extra], capture_output=True, text=True,
                       timeout=120)
    return json.loads(r.stdout)["median_ms"] if r.returncode == 0 else None


for shape in sys.argv[4:] or LAYERS:
    for extra in ([], ["--stride", "2"]):
        for layout in ("nhwc", "nchw"):
            t = {"old": [], "new": []}
            for rep in range(reps):
                for name in (["old", "new"] if rep % 2 == 0 else ["new", "old"]):
                    v = run(old if name == "old" else new, shape, extra, layout)
                    if v is not None:
                        t[name].append(v)
            mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
            print(f"{shape:>16} {' '.join(extra):>10} {layout}: old {min(t['old']):.4f}/{mo:.4f}  "
                  f"new {min(t['new']):.4f}/{mn:.4f} ({mn / mo:.2f})", flush=True)
