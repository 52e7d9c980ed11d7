"""Session 26: one binary, an environment switch alternated (NOVA_NCHW_PHASES=0|1, then NOVA_PHASES=0|1 for
NHWC and NCHW16c, in measurement builds while the rules were being set), interleaved repetitions of
`nova bench conv`, 2 threads.
  [AB_VAR=NOVA_PHASES] [AB_LAYOUT=nhwc] python3 ab_env.py REPS NOVA 'N,C,H,W,K kernel stride pad' ...
Prints each layer's medians and the median of the per-repetition ratios (1 over 0)."""
import json, statistics, subprocess, sys, os

reps, nova = int(sys.argv[1]), sys.argv[2]
var, layout = os.environ.get("AB_VAR", "NOVA_NCHW_PHASES"), os.environ.get("AB_LAYOUT", "nchw")
for layer in sys.argv[3:]:
    shape, kernel, stride, pad = layer.split()
    t = {"0": [], "1": []}
    for _ in range(reps):
        for e in ("0", "1"):
            out = subprocess.run([nova, "bench", "conv", "--shape", shape, "--kernel", kernel, "--stride", stride,
                                  "--pad", pad, "--layout", layout, "--threads", "2", "--format", "json"],
                                 capture_output=True, text=True, env={**os.environ, var: e}, check=True)
            t[e].append(json.loads(out.stdout)["median_ms"])
    ratios = [b / a for a, b in zip(t["0"], t["1"])]
    print(f"{layout} {shape} k{kernel} s{stride} p{pad}: packed {statistics.median(t['0']):.4f} ms, phases "
          f"{statistics.median(t['1']):.4f} ms, phases/packed median ratio {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.2f}-{max(ratios):.2f})", flush=True)
