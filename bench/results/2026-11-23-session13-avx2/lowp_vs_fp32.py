# Run from the repository root: python3 bench/results/2026-11-23-session13-avx2/lowp_vs_fp32.py [reps]
import json, subprocess, statistics, sys
L = [(1,64,56,56,64),(1,128,28,28,128),(1,256,14,14,256),(1,512,7,7,512),(8,64,56,56,64),(8,128,28,28,128),(8,256,14,14,256),(8,512,7,7,512),(1,64,224,224,64)]
V = {"fp32": [], "bf16": ["--dtype","bf16"], "fp16": ["--dtype","fp16"], "fp16 io": ["--dtype","fp16","--io","fp16"],
     "int8 cal": ["--dtype","int8","--calibrate"], "int8 cal i8 16c": ["--dtype","int8","--calibrate","--input-type","int8","--layout","nchw16c"],
     "fp32 16c": ["--layout","nchw16c"]}
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
out = {}
for l in L:
    s = ",".join(map(str, l)); t = {k: [] for k in V}; tile = {}
    for r in range(reps):
        for k, a in V.items():
            j = json.loads(subprocess.run(["build/nova","bench","conv","--shape",s,"--threads","2","--format","json",*a],capture_output=True,text=True,check=True).stdout)
            t[k].append(j["median_ms"]); tile[k] = j["tile"] + " " + j.get("gemm_path","")
    best = {k: min(v) for k, v in t.items()}
    out[s] = {"best_ms": best, "tile": tile}
    print(f"{s:>18} " + "  ".join(f"{k} {best[k]:.3f}" for k in V) + " | fp32/bf16 %.2f fp32/fp16 %.2f fp32/fp16io %.2f fp32/int8cal %.2f fp32_16c/int8_16c %.2f" % (
        best["fp32"]/best["bf16"], best["fp32"]/best["fp16"], best["fp32"]/best["fp16 io"], best["fp32"]/best["int8 cal"], best["fp32 16c"]/best["int8 cal i8 16c"]), flush=True)
json.dump(out, open("lowp_vs_fp32.json","w"), indent=1)
