#!/usr/bin/env python3
"""Summarizes fp16_relu_profile.sh's output: per layer and layout, medians over the repetitions of the
old binary's scan share (stage "scales" / threads x wall), the output stage's share in each binary, the
output stage's and the whole thread time's ratios new / old (of medians), and the wall times. Usage: summarize_fp16_relu.py fp16_relu_profile.log"""
import statistics
import sys
from collections import defaultdict

rows = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 8:
        continue
    _, layer, layout, which = f[:4]
    wall, total, scales, output = map(float, f[4:])
    r = rows[(layer, layout)]
    r[which + "_wall"].append(wall)
    r[which + "_scan"].append(100 * scales / total)
    r[which + "_out"].append(100 * output / total)
    r[which + "_out_ms"].append(output)
    r[which + "_total"].append(total)
med = statistics.median
print("%-18s %-8s %9s %9s %9s %9s %9s %9s %9s %9s" % (
    "layer", "layout", "scan old%", "scan new%", "out old%", "out new%", "out n/o", "thr n/o", "wall old",
    "wall new"))
for (layer, layout), r in rows.items():
    print("%-18s %-8s %9.2f %9.2f %9.2f %9.2f %9.3f %9.3f %9.3f %9.3f" % (
        layer, layout, med(r["old_scan"]), med(r["new_scan"]), med(r["old_out"]), med(r["new_out"]),
        med(r["new_out_ms"]) / med(r["old_out_ms"]), med(r["new_total"]) / med(r["old_total"]),
        med(r["old_wall"]), med(r["new_wall"])))
