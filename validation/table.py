"""Render evaluate.py's JSON-lines results as a markdown table (works on partial runs too).

    .venv/bin/python validation/table.py validation/results/slice_vgg.jsonl [more.jsonl ...]
    .venv/bin/python validation/table.py --pivot validation/results/slice_*.jsonl   # top-1 per preset
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402


def load(paths):
    rows = []
    for p in paths:
        for line in Path(p).read_text().splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def pivot(rows, key="top1"):
    presets = [p for p in evaluate.wr.EVAL_PRESETS if any(r["preset"] == p for r in rows)]
    out = ["| net | images | tile | points | " + " | ".join(presets) + " |",
           "|---|---:|---|---|" + "---:|" * len(presets)]
    seen = []
    for r in rows:
        k = (r["arch"], r["images"], r["tile"], r["points"])
        if k not in seen:
            seen.append(k)
    for k in seen:
        cells = []
        for p in presets:
            hit = [r for r in rows if (r["arch"], r["images"], r["tile"], r["points"]) == k and r["preset"] == p]
            if not hit:
                cells.append("")
                continue
            r = hit[-1]
            v = f"{100 * r[key]:.2f}" if key in ("top1", "agree") else f"{r[key]:.1e}"
            if r.get("layer_nan", 0) or r.get("layer_inf", 0):
                v += "*"
            cells.append(v)
        if k[2] == "direct":
            cells = [f"{100 * hit_direct[key]:.2f}" if key in ("top1", "agree") else f"{hit_direct[key]:.1e}"
                     for hit_direct in [next(r for r in rows if (r["arch"], r["images"], r["tile"], r["points"]) == k)]]
            cells += [""] * (len(presets) - 1)
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--pivot", choices=["top1", "agree", "rel_l2"], default=None,
                    help="one row per (net, tile, points), one column per preset; * = NaN/Inf in some layer")
    args = ap.parse_args()
    rows = load(args.files)
    print(pivot(rows, args.pivot) if args.pivot else evaluate.fmt_table(rows))


if __name__ == "__main__":
    main()
