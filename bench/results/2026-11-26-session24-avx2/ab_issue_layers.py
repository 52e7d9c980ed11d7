"""Session 24: the issue's FP32 layer set timed with two nova binaries interleaved (the order alternating per
repetition), 2 threads, NCHW and NCHW16c, each plan alone (`nova bench conv`). Prints min / median of the
repetitions' median_ms and new over old (medians). Checks that the thread pool's changes (workers started
on the first job, the OpenMP branch) cost the engine alone nothing.

  python3 ab_issue_layers.py REPS OLD NEW
"""
import json, statistics, subprocess, sys

LAYERS = ["1,64,56,56,64", "1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512", "8,64,56,56,64",
          "8,128,28,28,128", "8,256,14,14,256", "8,512,7,7,512", "1,64,224,224,64"]
reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def run(binary, shape, layout):
    r = subprocess.run([binary, "bench", "conv", "--shape", shape, "--threads", "2", "--layout", layout,
                        "--format", "json"], capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout)["median_ms"] if r.returncode == 0 else None


for shape in LAYERS:
    for layout in ("nchw", "nchw16c"):
        t = {"old": [], "new": []}
        for rep in range(reps):
            for name in (["old", "new"] if rep % 2 == 0 else ["new", "old"]):
                v = run(old if name == "old" else new, shape, layout)
                if v is not None:
                    t[name].append(v)
        mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
        print(f"{shape:>16} {layout:>8}: old {min(t['old']):.4f}/{mo:.4f}  new {min(t['new']):.4f}/{mn:.4f} "
              f"({mn / mo:.2f})", flush=True)
