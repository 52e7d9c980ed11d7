"""Session 26: the grouped rule measured: a measurement build (NOVA_PHASES_MAXC read by direct_build.cpp, not committed,
copied to /tmp/nova_exp) with phases up to 4 channels per group (\"4\") or 64 (\"64\"), alternated, 2 threads.
  python3 ab_grouped_switch.py REPS 'layout N,C,H,W,K kernel stride pad groups' ..."""
import json, statistics, subprocess, sys, os
reps=int(sys.argv[1])
for layer in sys.argv[2:]:
    layout, shape, kernel, stride, pad, groups = layer.split()
    t={"4":[], "64":[]}
    for _ in range(reps):
        for e in t:
            out = subprocess.run(["/tmp/nova_exp", "bench", "conv", "--shape", shape, "--kernel", kernel, "--stride", stride, "--pad", pad, "--groups", groups, "--layout", layout, "--threads", "2", "--format", "json"], capture_output=True, text=True, check=True, env={**os.environ, "NOVA_PHASES_MAXC": e})
            t[e].append(json.loads(out.stdout)["median_ms"])
    r=[b/a for a,b in zip(t["4"], t["64"])]
    print(f"{layout} {shape} k{kernel} s{stride} p{pad} g{groups}: packed {statistics.median(t['4']):.4f} ms, phases {statistics.median(t['64']):.4f} ms, phases/packed median {statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})", flush=True)
