"""Session 24: two stride-2 direct layers (NHWC, 2 threads) with several nova binaries interleaved (the order
reversed every other repetition); prints each binary's median of the repetitions' median_ms. Used to check
that the direct path's plans which do not read kernel rows in place kept their speed across builds.

  python3 ab_binaries.py REPS BINARY [BINARY ...]
"""
import json, statistics, subprocess, sys

bins = sys.argv[2:]
for shape, extra in [("1,128,28,28,256", ["--stride", "2"]), ("1,256,14,14,512", ["--stride", "2"])]:
    t = {b: [] for b in bins}
    for rep in range(int(sys.argv[1])):
        for b in (bins if rep % 2 == 0 else bins[::-1]):
            r = subprocess.run([b, "bench", "conv", "--shape", shape, "--threads", "2", "--layout", "nhwc",
                                "--format", "json", *extra], capture_output=True, text=True, timeout=120)
            t[b].append(json.loads(r.stdout)["median_ms"])
    print(shape, "  ".join(f"{b} {statistics.median(v):.4f}" for b, v in t.items()))
