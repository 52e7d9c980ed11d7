#!/usr/bin/env python3
"""Medians of fp16_shift_profile.sh's log (rep layer layout which wall_ms thread_ms pack_ms scales_ms):
the scan ("scales") before (old) and after (new), and wall and thread time. Usage: summarize_fp16_deferred.py LOG"""
import collections
import statistics
import sys

runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 8:
        continue
    runs[(f[1], f[2], f[3])].append([float(v) for v in f[4:]])
med = lambda rows, i: statistics.median(r[i] for r in rows)
for key in sorted({k[:2] for k in runs}):
    old, new = runs[key + ("old",)], runs[key + ("new",)]
    print("%-16s %-8s scan %.3f -> %.3f ms (%.1f %% of thread time before); thread %.3f -> %.3f ms; wall %.3f -> %.3f ms"
          % (*key, med(old, 3), med(new, 3), 100 * med(old, 3) / med(old, 1), med(old, 1), med(new, 1),
             med(old, 0), med(new, 0)))
