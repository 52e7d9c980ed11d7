"""Render evaluate.py's JSON-lines results as a markdown table (works on partial runs too).

    .venv/bin/python validation/table.py validation/results/slice_vgg.jsonl [more.jsonl ...]
    .venv/bin/python validation/table.py --pivot top1 validation/results/slice_*.jsonl   # top-1 per preset
    .venv/bin/python validation/table.py --pivot top1 --grid validation/results/full_*.jsonl  # the issue's grid

Rows of int8 presets carry the V-scale definition (int8_v_scale; absent = 'image'); only one definition
is shown (--int8-v-scale, default image). A configuration present more than once shows its last row.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402


KEYS = ("arch", "images", "tile", "points", "preset", "top1", "agree", "rel_l2")  # of every evaluate.py row


def load(paths):
    """evaluate.py's rows from JSON-lines files; a file that cannot be read or is not such output ends the
    run with its name and line (a line cut short by a killed run is skipped, as evaluate.py --resume does)."""
    rows = []
    for p in paths:
        try:
            text = Path(p).read_text()
        except (OSError, UnicodeDecodeError) as e:
            sys.exit(f"table.py: cannot read {p}: {e}")
        lines = text.splitlines()
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                if i == len(lines) and i > 1:
                    print(f"table.py: {p}:{i}: last line cut short (a killed run?), skipped", file=sys.stderr)
                    continue
                sys.exit(f"table.py: {p}:{i}: not JSON (expected evaluate.py's JSON-lines output)")
            missing = [k for k in KEYS if not isinstance(row, dict) or k not in row]
            if missing:
                sys.exit(f"table.py: {p}:{i}: not an evaluate.py result row (no {', '.join(missing)})")
            rows.append(row)
    return rows


def select(rows, grid=False, v_scale="image"):
    """Rows of one int8 V-scale definition; with grid, only the issue's grid (standard, the tile's
    practitioners' set, seed nova, catalogue) and the direct rows, in that order per tile."""
    rows = [r for r in rows if not str(r.get("preset", "")).startswith("int8")
            or r.get("int8_v_scale", "image") == v_scale]
    if not grid:
        return rows
    order = {}
    for (m, r_), names in evaluate.wr.GRID_POINTS.items():
        for i, nme in enumerate(names):
            order[(f"F({m},{r_})", nme)] = (m, i)
    keep = [r for r in rows if r["tile"] == "direct" or (r["tile"], r["points"]) in order]
    nets = []
    for r in keep:
        if (r["arch"], r["images"]) not in nets:
            nets.append((r["arch"], r["images"]))
    return sorted(keep, key=lambda r: (nets.index((r["arch"], r["images"])),
                                       (-1, -1) if r["tile"] == "direct" else order[(r["tile"], r["points"])]))


def pivot(rows, key="top1"):
    presets = [p for p in evaluate.wr.EVAL_PRESETS if any(r["preset"] == p for r in rows)]
    out = ["| net | images | tile | points | " + " | ".join(presets) + " |",
           "|---|---:|---|---|" + "---:|" * len(presets)]
    seen = []
    for r in rows:
        k = (r["arch"], r["images"], r["tile"], r["points"])
        if k not in seen:
            seen.append(k)
    # group by network, then by tile (direct first); within a tile, first appearance
    nets = []
    for k in seen:
        if k[:2] not in nets:
            nets.append(k[:2])
    tile_rank = lambda t: (0, 0) if t == "direct" else (1, tuple(int(v) for v in t[2:-1].split(",")))
    seen = sorted(seen, key=lambda k: (nets.index(k[:2]), tile_rank(k[2])))
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
            if r.get("path") == "nova":  # nova's C++ engine through nova.torch rather than the emulation
                v += "†"
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
                    help="one row per (net, tile, points), one column per preset; * = NaN/Inf in some layer, "
                         "† = nova's engine (path nova) rather than the emulation")
    ap.add_argument("--grid", action="store_true", help="only the issue's grid of point sets, in its order")
    ap.add_argument("--int8-v-scale", choices=list(evaluate.wr.V_SCALES), default="image")
    args = ap.parse_args()
    rows = select(load(args.files), args.grid, args.int8_v_scale)
    print(pivot(rows, args.pivot) if args.pivot else evaluate.fmt_table(rows))


if __name__ == "__main__":
    main()
