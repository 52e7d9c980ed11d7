"""Session 28: several nova binaries alternated on direct-path layers (`nova bench conv`, 2 threads): each
binary's median over the repetitions and the median (range) of its per-repetition ratio to the first binary.
  python3 ab_multi.py REPS BIN1,BIN2,... 'layout N,C,H,W,K kernel stride pad groups' ..."""
import json, statistics, subprocess, sys

reps, bins = int(sys.argv[1]), sys.argv[2].split(",")
for layer in sys.argv[3:]:
    layout, shape, kernel, stride, pad, groups = layer.split()
    t = {b: [] for b in bins}
    for _ in range(reps):
        for b in bins:
            out = subprocess.run([b, "bench", "conv", "--shape", shape, "--kernel", kernel, "--stride", stride, "--pad",
                                  pad, "--groups", groups, "--layout", layout, "--threads", "2", "--format", "json"],
                                 capture_output=True, text=True, check=True)
            t[b].append(json.loads(out.stdout)["median_ms"])
    parts = []
    for b in bins:
        r = [x / y for x, y in zip(t[b], t[bins[0]])]
        parts.append(f"{b.split('/')[-1]} {statistics.median(t[b]):.4f} ms ({statistics.median(r):.3f}, "
                     f"{min(r):.2f}-{max(r):.2f})")
    print(f"{layout} {shape} k{kernel} s{stride} p{pad} g{groups}: " + "; ".join(parts), flush=True)
