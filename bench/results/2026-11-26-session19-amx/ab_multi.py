"""Session 18: several nova binaries timed interleaved (the order rotating each repetition), 2 threads.
Prints per layer and variant each binary's min / median of the repetitions' median_ms and its median
over the first binary's.

  python3 ab_multi.py reps name=binary[,name=binary...] variant[,variant...] [layer ...]
"""
import json, statistics, subprocess, sys

VARIANTS = {
    "bf16 16c": ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"],
    "int8 16c": ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
    "fp16 16c": ["--dtype", "fp16", "--io", "fp16", "--layout", "nchw16c"],
    "fp32 16c": ["--layout", "nchw16c"],
    "fp32": [],
    "int8": ["--dtype", "int8", "--calibrate", "--input-type", "int8"],
    "int8-spatial 16c": ["--dtype", "int8-spatial", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
}
reps = int(sys.argv[1])
binaries = dict(x.split("=") for x in sys.argv[2].split(","))
variants = sys.argv[3].split(",")
layers = sys.argv[4:] or ["1,64,56,56,64", "1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512",
                          "8,64,56,56,64", "8,128,28,28,128", "8,256,14,14,256", "8,512,7,7,512",
                          "1,64,224,224,64"]


def run(binary, layer, args):
    r = subprocess.run([binary, "bench", "conv", "--shape", layer, "--threads", "2", "--format", "json", *args],
                       capture_output=True, text=True, timeout=120)
    return json.loads(r.stdout)["median_ms"] if r.returncode == 0 else None


names = list(binaries)
for layer in layers:
    for v in variants:
        times = {b: [] for b in names}
        for rep in range(reps):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for b in order:
                t = run(binaries[b], layer, VARIANTS[v])
                if t is not None:
                    times[b].append(t)
        if not all(times.values()):
            print(f"{layer} {v}: failed", flush=True)
            continue
        base = statistics.median(times[names[0]])
        cols = "  ".join(f"{b} {min(t):.3f}/{statistics.median(t):.3f} ({statistics.median(t) / base:.2f})"
                         for b, t in times.items())
        print(f"{layer:>16} {v:>9}: {cols}", flush=True)
