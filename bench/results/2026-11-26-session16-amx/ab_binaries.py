"""Session 16: the binary before a change (build/nova_old, commit aafdec9) against the one after it
(build/nova), interleaved: each repetition times both binaries on every variant of a layer, the order of
the two alternating. 2 threads, bf16, int8 and fp16 on NCHW16c tensors (issue 6's columns), FP32 as a
control. Prints per layer and variant min / median of the repetitions' median_ms and new over old.
Device run 2 timed one AMX tile session per thread and execute with it (bf16 and int8), run 3 typed
NCHW16c tensors read in place (bf16, int8, fp16), and the development machine the latter (all four).

  python3 ab_binaries.py [reps] [variant ...]
"""
import json, statistics, subprocess, sys

LAYERS = ["1,64,56,56,64", "1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512", "8,64,56,56,64",
          "8,128,28,28,128", "8,256,14,14,256", "8,512,7,7,512", "1,64,224,224,64"]
VARIANTS = {
    "bf16 16c": ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"],
    "int8 16c": ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
    "fp16 16c": ["--dtype", "fp16", "--io", "fp16", "--layout", "nchw16c"],
    "fp32 16c": ["--layout", "nchw16c"],
    "fp32": [],
    "int8-spatial 16c": ["--dtype", "int8-spatial", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
    "int8-spatial": ["--dtype", "int8-spatial", "--calibrate"],
    "int8": ["--dtype", "int8", "--calibrate", "--input-type", "int8"],
}
BINARIES = {"old": "build/nova_old", "new": "build/nova"}
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
if len(sys.argv) > 2:
    VARIANTS = {k: v for k, v in VARIANTS.items() if k in sys.argv[2:]}


def run(binary, layer, args):
    r = subprocess.run([binary, "bench", "conv", "--shape", layer, "--threads", "2", "--format", "json", *args],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return None, r.stderr.strip()
    j = json.loads(r.stdout)
    return j["median_ms"], f'{j.get("tile")} {"phased" if "phased" in j.get("reason", "") else ""}'


for layer in LAYERS:
    for name, args in VARIANTS.items():
        times = {b: [] for b in BINARIES}
        for rep in range(reps):
            order = list(BINARIES) if rep % 2 == 0 else list(reversed(BINARIES))
            for b in order:
                t, _ = run(BINARIES[b], layer, args)
                if t is not None:
                    times[b].append(t)
        if not all(times.values()):
            print(f"{layer} {name}: failed", flush=True)
            continue
        o, n = times["old"], times["new"]
        print(f"{layer:>16} {name}: old {min(o):.3f}/{statistics.median(o):.3f}  new {min(n):.3f}/"
              f"{statistics.median(n):.3f} ms  new/old {min(n) / min(o):.2f} (best) "
              f"{statistics.median(n) / statistics.median(o):.2f} (median)", flush=True)
