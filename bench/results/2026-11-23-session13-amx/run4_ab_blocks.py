import json, subprocess, statistics
layers = ["1,256,14,14,256", "1,512,7,7,512", "1,128,28,28,128"]
base = {"bf16": ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"],
        "int8": ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"]}
for L in layers:
    for p, a in base.items():
        res = {}
        for rep in range(4):
            for b in ["0", "16", "32", "48", "64"]:
                r = subprocess.run(["build/nova", "bench", "conv", "--shape", L, "--threads", "2", "--format", "json", *a, "--tile-block", b], capture_output=True, text=True)
                if r.returncode: print(b, r.stderr); continue
                j = json.loads(r.stdout); res.setdefault(b, []).append(j["median_ms"]); tile = j["tile"]
        print(L, p, tile, "  ".join(f"blk {b}: {min(v):.3f}/{statistics.median(v):.3f}" for b, v in res.items()), flush=True)
