"""Session 18: the low-precision paths' automatic tile against each tile it may take, on this machine,
2 threads, NCHW16c tensors of the plan's own type. Repetitions alternate the tiles (rotating order).
Prints per layer and precision each tile's min / median of the repetitions' median_ms and its median
over the automatic choice's.

  python3 tiles_lowp.py [reps] [binary] [precision ...]
"""
import json, statistics, subprocess, sys

PRECISIONS = {
    "int8": (["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"], ["2,3", "4,3"]),
    "int8-spatial": (["--dtype", "int8-spatial", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
                     ["2,3", "4,3"]),
    "bf16": (["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"], ["2,3", "4,3", "6,3"]),
    "fp16": (["--dtype", "fp16", "--io", "fp16", "--layout", "nchw16c"], ["2,3", "4,3", "6,3"]),
}
LAYERS = ["1,64,56,56,64", "1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512", "8,64,56,56,64",
          "8,128,28,28,128", "8,256,14,14,256", "8,512,7,7,512", "1,64,224,224,64"]
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
binary = sys.argv[2] if len(sys.argv) > 2 else "build/nova"
chosen = sys.argv[3:] or list(PRECISIONS)


def run(layer, args, tile):
    extra = [] if tile == "auto" else ["--tile", tile]
    r = subprocess.run([binary, "bench", "conv", "--shape", layer, "--threads", "2", "--format", "json", *args,
                        *extra], capture_output=True, text=True, timeout=300)
    if r.returncode:
        return None, ""
    j = json.loads(r.stdout)
    return j["median_ms"], j.get("tile", "")


for layer in LAYERS:
    for name in chosen:
        args, tiles = PRECISIONS[name]
        cands = ["auto"] + tiles
        times = {t: [] for t in cands}
        auto_tile = ""
        for rep in range(reps):
            for t in cands[rep % len(cands):] + cands[:rep % len(cands)]:
                ms, tl = run(layer, args, t)
                if ms is not None:
                    times[t].append(ms)
                    if t == "auto":
                        auto_tile = tl
        base = statistics.median(times["auto"])
        best = min((statistics.median(v), t) for t, v in times.items() if v and t != "auto")
        cols = "  ".join(f"{t}: {min(v):.3f}/{statistics.median(v):.3f} ({statistics.median(v) / base:.2f})"
                         for t, v in times.items() if v)
        print(f"{layer:>16} {name:>12} auto={auto_tile}  {cols}  best {best[1]} at {best[0] / base:.2f} of auto",
              flush=True)
