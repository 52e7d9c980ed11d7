"""Auto choice vs forced tiles/direct over realistic layers (FP32, 2 threads, NCHW). 3 alternated reps."""
import json, subprocess, statistics, sys
B = sys.argv[1] if len(sys.argv) > 1 else "build/nova"
layers = [("1,3,224,224,64", 3), ("1,32,112,112,64", 3), ("1,96,56,56,96", 3), ("1,16,320,320,16", 3), ("2,256,32,32,128", 3), ("1,320,14,14,320", 3)] if len(sys.argv) > 2 else [  # shape, kernel
    ("1,3,224,224,64", 3), ("1,32,112,112,64", 3), ("1,64,112,112,64", 3), ("1,96,56,56,96", 3),
    ("1,160,28,28,160", 3), ("1,320,14,14,320", 3), ("1,1024,7,7,1024", 3), ("4,48,75,75,48", 3),
    ("1,64,128,128,32", 3), ("1,16,320,320,16", 3), ("2,256,32,32,128", 3), ("1,128,15,15,256", 3),
    ("1,64,56,56,64", 5), ("1,32,64,64,32", 5), ("1,128,20,20,128", 5), ("1,24,150,150,24", 3),
    ("1,512,28,28,512", 3), ("1,64,17,17,64", 3),
]
variants = [("auto", []), ("2,3", ["--tile", "2,3"]), ("4,3", ["--tile", "4,3"]), ("6,3", ["--tile", "6,3"]),
            ("7,3", ["--tile", "7,3"]), ("direct", ["--algorithm", "direct"])]
def run(shape, k, args):
    r = subprocess.run([B, "bench", "conv", "--shape", shape, "--kernel", str(k), "--threads", "2", "--format", "json", *args],
                       capture_output=True, text=True, timeout=300)
    if r.returncode: return None, None
    j = json.loads(r.stdout); return j["median_ms"], j.get("tile") or j.get("algorithm")
for shape, k in layers:
    vs = [v for v in variants if k == 3 or v[0] in ("auto", "direct")] + ([("2,5", ["--tile", "2,5"]), ("4,5", ["--tile", "4,5"])] if k == 5 else [])
    t = {n: [] for n, _ in vs}; chosen = None
    for rep in range(5):
        for n, a in (vs if rep % 2 == 0 else vs[::-1]):
            ms, tile = run(shape, k, a)
            if ms is not None: t[n].append(ms)
            if n == "auto": chosen = tile
    med = {n: statistics.median(x) for n, x in t.items() if x}
    best = min((m, n) for n, m in med.items() if n != "auto")
    print(f"{shape} k{k}: auto={chosen} {med['auto']:.3f} ms; best forced {best[1]} {best[0]:.3f}; auto/best {med['auto']/best[0]:.2f}  | " +
          " ".join(f"{n} {m:.3f}" for n, m in med.items()), flush=True)
