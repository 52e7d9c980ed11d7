"""Session 28: one nova binary with and without an environment variable (an experiment build's switch), alternated,
`nova bench conv` medians, 2 threads: python3 ab_env2.py REPS BINARY VAR 'layout N,C,H,W,K kernel stride pad groups' ..."""
import json, os, statistics, subprocess, sys
reps, binary, var = int(sys.argv[1]), sys.argv[2], sys.argv[3]
for layer in sys.argv[4:]:
    layout, shape, kernel, stride, pad, groups = layer.split()
    t = {0: [], 1: []}
    for _ in range(reps):
        for on in (0, 1):
            env = dict(os.environ)
            if on: env[var] = "1"
            out = subprocess.run([binary, "bench", "conv", "--shape", shape, "--kernel", kernel, "--stride", stride, "--pad", pad,
                                  "--groups", groups, "--layout", layout, "--threads", "2", "--format", "json"], env=env,
                                 capture_output=True, text=True, check=True)
            t[on].append(json.loads(out.stdout)["median_ms"])
    r = [b / a for a, b in zip(t[0], t[1])]
    print(f"{layout} {shape} k{kernel} s{stride}: off {statistics.median(t[0]):.3f} on {statistics.median(t[1]):.3f} on/off {statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})", flush=True)
