"""Session 17: every FP32 tile against the automatic choice on issue 5's layer set, 2 threads, NCHW and
NCHW16c; best of 3 rounds of `nova bench conv` medians (rounds interleaved over the layers). Writes
tiles_avx2.json beside this file, which model_fit.py reads. Run from the repository root:

  python3 bench/results/2026-11-26-session17-avx2/tiles_avx2.py
"""
import json, os, subprocess
L = ["1,64,56,56,64", "1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512", "8,64,56,56,64",
     "8,128,28,28,128", "8,256,14,14,256", "8,512,7,7,512", "1,64,224,224,64"]
TILES = ("2,3", "4,3", "6,3", "7,3", "auto")
res = {}
for rep in range(3):
    for l in L:
        for lay in ("nchw", "nchw16c"):
            for t in TILES:
                a = [] if t == "auto" else ["--tile", t]
                r = subprocess.run(["build/nova", "bench", "conv", "--shape", l, "--threads", "2", "--layout", lay,
                                    "--format", "json", *a], capture_output=True, text=True, check=True)
                j = json.loads(r.stdout)
                res.setdefault(f"{l} {lay} {t}", []).append(j["median_ms"])
                if t == "auto":
                    res.setdefault(f"{l} {lay} autotile", []).append(j["tile"])
json.dump(res, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiles_avx2.json"), "w"), indent=0)
for l in L:
    for lay in ("nchw", "nchw16c"):
        row = {t: min(res[f"{l} {lay} {t}"]) for t in TILES}
        best = min((v, k) for k, v in row.items() if k != "auto")
        print(l, lay, " ".join(f"{k} {v:.3f}" for k, v in row.items()), "auto=", res[f"{l} {lay} autotile"][0],
              "best=", best[1], f"auto/best {row['auto'] / best[0]:.2f}", flush=True)
