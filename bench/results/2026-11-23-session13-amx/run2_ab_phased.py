import json, subprocess, sys, statistics, os
layers = ["1,128,28,28,128", "1,256,14,14,256", "1,512,7,7,512", "8,512,7,7,512"]
variants = {
  "bf16 auto": ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c"],
  "bf16 phased": ["--dtype", "bf16", "--io", "bf16", "--layout", "nchw16c", "--tile-block", "-1"],
  "int8 auto": ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c"],
  "int8 phased": ["--dtype", "int8", "--calibrate", "--input-type", "int8", "--layout", "nchw16c", "--tile-block", "-1"],
  "fp32 auto": ["--layout", "nchw16c"],
  "fp32 phased": ["--layout", "nchw16c", "--tile-block", "-1"],
}
extra = sys.argv[1:]
for L in layers:
    res = {k: [] for k in variants}
    info = {}
    for rep in range(4):
        for k, a in variants.items():
            r = subprocess.run(["build/nova", "bench", "conv", "--shape", L, "--threads", "2", "--format", "json", *a, *extra],
                               capture_output=True, text=True)
            if r.returncode: print(k, r.stderr); continue
            j = json.loads(r.stdout); res[k].append(j["median_ms"]); info[k] = j.get("tile")
    print(L, "  ".join(f"{k} {min(v):.3f}/{statistics.median(v):.3f} {info.get(k)}" for k, v in res.items() if v), flush=True)
