"""Session 18: on AMX, the fused order's block of tiles (`--tile-block B`; 0 the automatic choice, -1 the
phased order) for bf16 and int8 on NCHW16c tensors, 2 threads, the engine's own tile. Repetitions
interleave the block sizes (rotating order). Prints per layer and dtype each block's min / median of the
repetitions' median_ms and its median over the automatic choice's.

  python3 sweep_blocks.py reps [layer ...]
"""
import json, statistics, subprocess, sys

DTYPES = {
    "bf16 16c": ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"],
    "int8 16c": ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
}
BLOCKS = [0, 16, 32, 48, 64, -1]
reps = int(sys.argv[1])
layers = sys.argv[2:] or ["1,64,56,56,64", "1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512",
                          "8,64,56,56,64", "8,128,28,28,128", "8,256,14,14,256", "8,512,7,7,512",
                          "1,64,224,224,64"]


def run(layer, args, block):
    r = subprocess.run(["build/nova", "bench", "conv", "--shape", layer, "--threads", "2", "--format", "json",
                        "--tile-block", str(block), *args], capture_output=True, text=True, timeout=120)
    if r.returncode:
        return None, ""
    j = json.loads(r.stdout)
    return j["median_ms"], j.get("tile", "")


for layer in layers:
    for name, args in DTYPES.items():
        times = {b: [] for b in BLOCKS}
        tile = ""
        for rep in range(reps):
            order = BLOCKS[rep % len(BLOCKS):] + BLOCKS[:rep % len(BLOCKS)]
            for b in order:
                t, tl = run(layer, args, b)
                if t is not None:
                    times[b].append(t)
                    tile = tile or tl
        if not times[0]:
            print(f"{layer} {name}: failed", flush=True)
            continue
        base = statistics.median(times[0])
        cols = "  ".join(f"{b}: {min(t):.3f}/{statistics.median(t):.3f} ({statistics.median(t) / base:.2f})"
                         for b, t in times.items() if t)
        print(f"{layer:>16} {name} {tile}  {cols}", flush=True)
