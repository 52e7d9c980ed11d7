"""Cross-check the reference emulation (winograd_ref.py) against nova's C++ precision-model emulation
(`nova error`) on a real exported layer, layer output against float64 direct convolution.

    .venv/bin/python validation/crosscheck.py --nova build-h7/nova [--data validation/data/vgg_features.2]

For the int8 presets the emulation runs with both V-scale definitions: 'image' (per image, the network
default) and 'batch' (per tensor over the batch, per position over the batch for int8-tap: nova's C++
definition); the nova column is comparable with 'batch'. Prints a markdown table (--out writes it too).
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import winograd_ref as wr  # noqa: E402
import script_checks  # noqa: E402

PRESETS = ["fp32", "fp16-storage", "fp16-all", "bf16-storage", "int8-tensor", "int8-channel", "int8-tap"]
DEFAULT_SETS = ["4:standard", "4:catalogue", "6:practitioners", "6:nova", "6:catalogue", "8:tvm", "8:catalogue"]


def rel_l2(y: torch.Tensor, ref: torch.Tensor) -> float:
    y = y.double()
    if not bool(torch.isfinite(y).all()):
        return math.inf
    return ((y - ref).norm() / ref.norm()).item()


def run_nova(nova: str, t: wr.Transform, presets: list, data: Path) -> dict:
    """{preset: rel_l2} from `nova error --format json`; the transform goes as its exact JSON when it is a
    catalogue entry, else as points with nova's wincnn scaling (= winograd_ref's construction up to row signs)."""
    cmd = [nova, "error", "--tile", f"{t.m},{t.r}", "--precision", ",".join(presets), "--data", str(data),
           "--format", "json"]
    with tempfile.TemporaryDirectory() as tmp:
        if t.origin.get("json"):
            f = Path(tmp) / "t.json"
            f.write_text(t.origin["json"])
            cmd.append(str(f))
        else:
            cmd += ["--points", t.points_str(), "--scaling", "wincnn"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"crosscheck: `{' '.join(cmd)}` failed (exit {r.returncode}): {r.stderr.strip()}")
        out = r.stdout
    res = {}
    for r in json.loads(out)["results"]:
        v = r["rel_l2"]
        res[r["precision"]] = math.inf if v is None or (isinstance(v, str) and "inf" in v.lower()) else float(v)
    return res


def fmt(v: float | None) -> str:
    if v is None:
        return "—"
    if math.isinf(v):
        return "inf"
    return f"{v:.2e}" if v < 0.01 else f"{v:.3g}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nova", default=None, help="path of the nova CLI (omit: emulation columns only)")
    ap.add_argument("--data", type=Path, default=HERE / "data" / "vgg_features.2")
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS), help="TILE:NAME,... (NAME as in evaluate.py)")
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    presets = args.presets.split(",")
    for p in presets:
        if p not in wr.PRESETS:
            ap.error(f"unknown preset {p!r}; known: {', '.join(wr.PRESETS)}")
    for spec in args.sets.split(","):  # each set made once here: a bad one is refused before any work
        tile, _, name = spec.partition(":")
        if not tile.isdigit() or not name:
            ap.error(f"--sets wants TILE:NAME items (e.g. 6:nova), got {spec!r}")
        m = int(tile)
        if (m, 3) not in wr.POINT_SETS:
            tiles = ", ".join(str(k[0]) for k in wr.POINT_SETS if k[1] == 3)
            ap.error(f"--sets {spec!r}: no tile F({m},3); tiles: {tiles}")
        if name == "practitioners" and m != 6 and (m, 3) not in wr.PRACTITIONERS:
            ap.error(f"--sets {spec!r}: no practitioners' set for F({m},3)")
        try:
            for p in presets:
                wr.point_set(m, 3, wr.PRACTITIONERS[(m, 3)] if name == "practitioners" and m != 6 else name, p)
        except (ValueError, KeyError) as e:
            ap.error(f"--sets {spec!r}: {e}")
    for f in ("input.npy", "weights.npy"):
        if not (args.data / f).is_file():
            ap.error(f"--data {str(args.data)!r} has no {f} (an exported layer: validation/export_npy.py)")
    if args.nova and not (os.path.isfile(args.nova) and os.access(args.nova, os.X_OK)):
        ap.error(f"--nova {args.nova!r} is not an executable")
    script_checks.require_writable(ap, "--out", args.out)  # before the run
    x = torch.from_numpy(np.load(args.data / "input.npy"))
    w = torch.from_numpy(np.load(args.data / "weights.npy"))
    pad = w.shape[-1] // 2
    ref = F.conv2d(x.double(), w.double(), padding=pad)
    head = ["transform", "preset", "emulation, V per image", "emulation, V per batch", "nova error", "nova / emul. (batch)"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---:|"]
    for spec in args.sets.split(","):
        tile, name = spec.split(":")
        m = int(tile)
        name = wr.PRACTITIONERS[(m, 3)] if name == "practitioners" and m != 6 else name
        per_preset = {p: wr.point_set(m, 3, name, p) for p in presets}
        nv = {}
        if args.nova:
            if name == "catalogue":  # one entry per preset
                for p in presets:
                    nv.update({p: run_nova(args.nova, per_preset[p], [p], args.data)[p]})
            else:
                nv = run_nova(args.nova, per_preset[presets[0]], presets, args.data)
        for p in presets:
            t = per_preset[p]
            e_img = rel_l2(wr.winograd_conv2d(x, w, None, pad, t, p, v_scale="image"), ref)
            e_bat = rel_l2(wr.winograd_conv2d(x, w, None, pad, t, p, v_scale="batch"), ref) if p.startswith("int8") else None
            n = nv.get(p)
            cmp = e_bat if e_bat is not None else e_img
            ratio = (f"{n / cmp:.3f}" if n is not None and cmp and not math.isinf(n) and not math.isinf(cmp)
                     else ("both inf" if n is not None and math.isinf(n) and math.isinf(cmp) else "—"))
            label = f"F({m},3) {name}" + (f" ({t.points_str()})" if name == "catalogue" else "")
            lines.append(f"| {label} | {p} | {fmt(e_img)} | {fmt(e_bat)} | {fmt(n)} | {ratio} |")
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    meta = json.loads((args.data / "meta.json").read_text()) if (args.data / "meta.json").is_file() else {}
    note = (f"\nData: {args.data.name} ({meta.get('network', '?')} layer {meta.get('layer', '?')}, input "
            f"{list(x.shape)}, weights {list(w.shape)}); relative L2 error of the layer output against float64 "
            f"direct convolution.")
    print()
    print(table + note)
    if args.out:
        args.out.write_text(table + note + "\n")


if __name__ == "__main__":
    main()
