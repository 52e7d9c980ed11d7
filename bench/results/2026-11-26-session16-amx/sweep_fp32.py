"""Session 16, device run 4: FP32 on AVX-512 where nova trails oneDNN (issue 5's misses in run 2): every
tile and order against the automatic choice and oneDNN's FP32 Winograd and direct convolutions, NCHW16c,
2 threads, interleaved (each repetition times every column once, layer by layer). Prints min / median
ms per column.

  python3 sweep_fp32.py [reps]
"""
import json, os, statistics, subprocess, sys

LAYERS = ["1,256,14,14,256", "1,512,7,7,512", "8,512,7,7,512", "8,64,56,56,64"]
COLUMNS = [("auto", [])] + [(f"F({t}) {o}", ["--tile", t, "--tile-block", b])
                            for t in ("2,3", "4,3", "6,3") for o, b in (("own", "0"), ("phased", "-1"))]
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2


def nova(layer, args):
    r = subprocess.run(["build/nova", "bench", "conv", "--shape", layer, "--threads", "2", "--layout", "nchw16c",
                        "--format", "json", *args], capture_output=True, text=True, timeout=120)
    if r.returncode:
        return None, r.stderr.strip()[:80]
    j = json.loads(r.stdout)
    order = "phased" if " phased" in j.get("reason", "") else ""
    return j["median_ms"], f'{j.get("tile")}'


def onednn(layer, algorithm):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    r = subprocess.run(["build/nova_peer_onednn", "--shape", layer, "--algorithm", algorithm, "--dtype", "f32"],
                       capture_output=True, text=True, env=env, timeout=120)
    if r.returncode:
        return None, "failed"
    j = json.loads(r.stdout)
    return (j["median_ms"], j.get("impl", "")) if j.get("created") else (None, "not created")


for layer in LAYERS:
    times, what = {}, {}
    cols = [(n, (lambda a=a: nova(layer, a))) for n, a in COLUMNS] + \
           [("dnnl wino", lambda: onednn(layer, "winograd")), ("dnnl direct", lambda: onednn(layer, "direct"))]
    for rep in range(reps):
        for n, f in cols:
            t, w = f()
            what[n] = w
            if t is not None:
                times.setdefault(n, []).append(t)
    print(layer, " | ".join(f"{n} {min(v):.3f}/{statistics.median(v):.3f}" + (f" [{what[n]}]" if n == "auto" else "")
                            for n, v in times.items()), flush=True)
