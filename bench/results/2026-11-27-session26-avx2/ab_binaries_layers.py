"""Session 26: two nova binaries alternated on direct-path layers (`nova bench conv`, 2 threads), medians and the
median of per-repetition ratios (new over old).
  python3 ab_binaries_layers.py REPS OLD NEW 'layout N,C,H,W,K kernel stride pad groups' ..."""
import json, statistics, subprocess, sys

reps, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
for layer in sys.argv[4:]:
    layout, shape, kernel, stride, pad, groups = layer.split()
    t = {old: [], new: []}
    desc = ""
    for _ in range(reps):
        for b in (old, new):
            out = subprocess.run([b, "bench", "conv", "--shape", shape, "--kernel", kernel, "--stride", stride, "--pad",
                                  pad, "--groups", groups, "--layout", layout, "--threads", "2", "--format", "json"],
                                 capture_output=True, text=True, check=True)
            j = json.loads(out.stdout)
            t[b].append(j["median_ms"])
            if b == new:
                desc = j.get("description", j.get("algorithm", ""))
    r = [n / o for o, n in zip(t[old], t[new])]
    print(f"{layout} {shape} k{kernel} s{stride} p{pad} g{groups}: old {statistics.median(t[old]):.4f} ms, new "
          f"{statistics.median(t[new]):.4f} ms, new/old median {statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})",
          flush=True)
