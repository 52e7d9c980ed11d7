"""Network-level validation: every eligible conv replaced by a Winograd implementation.

    .venv/bin/python validation/evaluate.py                      # full: 10 000 images, all configs
    .venv/bin/python validation/evaluate.py --limit 500          # fast slice
    .venv/bin/python validation/evaluate.py --arch vgg --tiles 6 --points nova,practitioners \\
        --presets fp16-storage,int8-tap --limit 1000

Eligible convolutions: 3x3 or 5x5, stride 1, dilation 1, groups 1, zero padding; the others are
skipped and listed with the reason. For each (network, tile, point set, preset) it reports top-1 accuracy,
agreement with the FP32 direct model's predictions, the relative L2 error of the logits against a
float64 direct model (||L - L64||_2 / ||L64||_2 over all images and classes), and the NaN/Inf counts
in the replaced layers' outputs and in the logits.

Implementations ("path" column):
  emulation  validation/winograd_ref.py, the Python REFERENCE EMULATION of the presets (exact Cook-Toom
             transforms, torch arithmetic with rounding at the preset's stage boundaries).
  nova       nova's engine through nova.torch, once the Python package exists (--backend nova|auto).
The layers that are not convolutions run in FP32 in every configuration.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see train.py: busy-waiting OpenMP stalls under load

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fashion_mnist  # noqa: E402
import machine  # noqa: E402
import models  # noqa: E402
import script_checks  # noqa: E402
import winograd_ref as wr  # noqa: E402

WEIGHTS = HERE / "weights"
TILES = {4: (4, 3), 6: (6, 3), 7: (7, 3), 8: (8, 3)}  # default grid: 4, 6, 8 (--tiles 7 on request)


# ---------------------------------------------------------------------------------------------
# models and data
# ---------------------------------------------------------------------------------------------
def load_model(arch: str, weights_dir: Path = WEIGHTS):
    path = Path(weights_dir) / f"{arch}.pt"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: train it with `.venv/bin/python validation/train.py --arch {arch}`")
    ck = torch.load(path, map_location="cpu", weights_only=False)
    model = models.build(arch)
    if arch == "resnet":  # the stored weights are the BN-folded inference network
        model = models.fold_bn(model)
    model.load_state_dict(ck["state_dict"])
    return model.eval(), ck["info"]


def load_test(info: dict, limit: int = 0):
    if limit < 0:
        raise ValueError(f"limit must be 0 (all images) or more, got {limit}")
    img, lab = fashion_mnist.load("test")
    if limit:
        img, lab = img[:limit], lab[:limit]
    x = torch.from_numpy(fashion_mnist.to_float(img, info["norm_mean"], info["norm_std"]))
    return x, torch.from_numpy(lab)


# ---------------------------------------------------------------------------------------------
# replacement
# ---------------------------------------------------------------------------------------------
def eligibility(conv: nn.Conv2d) -> str | None:
    """None when eligible, else the reason it is not."""
    k = conv.kernel_size
    if k[0] != k[1] or k[0] not in (3, 5):
        return f"kernel {k[0]}x{k[1]} (needs 3x3 or 5x5)"
    if tuple(conv.stride) != (1, 1):
        return f"stride {tuple(conv.stride)}"
    if tuple(conv.dilation) != (1, 1):
        return f"dilation {tuple(conv.dilation)}"
    if conv.groups != 1:
        return f"groups {conv.groups}"
    if conv.padding_mode != "zeros":
        return f"padding_mode {conv.padding_mode}"
    if isinstance(conv.padding, str) or conv.padding[0] != conv.padding[1]:
        return f"padding {conv.padding}"
    return None


class EmulatedWinogradConv2d(nn.Module):
    """Conv2d replacement running validation/winograd_ref.py (REFERENCE EMULATION, not nova's engine)."""

    path = "emulation"

    def __init__(self, conv: nn.Conv2d, transform: wr.Transform, preset: str, v_scale: str = "image"):
        super().__init__()
        if conv.kernel_size[0] != transform.r:
            raise ValueError(f"kernel {conv.kernel_size} does not match F({transform.m},{transform.r})")
        self.weight = conv.weight.detach().clone()
        self.bias = None if conv.bias is None else conv.bias.detach().clone()
        self.padding = conv.padding[0]
        self.t = transform
        self.preset = preset
        self.v_scale = v_scale
        self.U = wr.filter_transform(transform, self.weight, preset)  # filter transformed once
        self.stats = wr.Stats()

    def forward(self, x):
        y = wr.winograd_conv2d(x, self.weight, self.bias, self.padding, self.t, self.preset, U=self.U,
                               stats=self.stats, v_scale=self.v_scale)
        return y.to(x.dtype)


def nova_factory():
    """nova's engine through nova.torch (issue 7), or None when the package does not import.

    The returned make(conv, transform, preset) gives a module, or None for what the engine does not
    implement (then the emulation runs): today nova.torch implements only the fp32 preset, and the
    '+bal' scalings are not passed on (nova's 'wincnn' scaling equals winograd_ref's construction up
    to the signs of rows, which change nothing). A catalogue transform goes to nova as its JSON, with its
    exact matrices and scaling (nova.Transform.from_json)."""
    try:
        import nova  # type: ignore
        import nova.torch as nt  # type: ignore
    except Exception:  # noqa: BLE001 - any import failure means: not available
        return None

    def make(conv, transform, preset):
        if preset != "fp32" or transform.name.endswith("+bal"):
            return None
        if transform.origin.get("json"):
            t = nova.Transform.from_json(transform.origin["json"])
        else:
            t = nova.Transform(f"{transform.m},{transform.r}", transform.points_str(), "wincnn")
        return nt.WinogradConv2d.from_conv2d(conv, transform=t, precision=preset, threads=torch.get_num_threads())
    return make


def replace_convs(model: nn.Module, make) -> tuple[nn.Module, list[dict]]:
    """Replace every eligible nn.Conv2d in place by make(conv); return (model, report)."""
    report = []
    for name, mod in list(model.named_modules()):
        for cname, child in list(mod.named_children()):
            if not isinstance(child, nn.Conv2d):
                continue
            full = f"{name}.{cname}" if name else cname
            why = eligibility(child)
            if why is None:
                setattr(mod, cname, make(child))
                report.append(dict(layer=full, replaced=True, shape=list(child.weight.shape)))
            else:
                report.append(dict(layer=full, replaced=False, reason=why, shape=list(child.weight.shape)))
    return model, report


# ---------------------------------------------------------------------------------------------
# evaluation
# ---------------------------------------------------------------------------------------------
def run_logits(model, x, batch):
    outs = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            outs.append(model(x[i:i + batch]))
    return torch.cat(outs)


def predictions(logits: torch.Tensor) -> torch.Tensor:
    """argmax; a row with any NaN/Inf counts as no prediction (-1, wrong and disagreeing)."""
    pred = logits.argmax(1)
    pred[~torch.isfinite(logits).all(1)] = -1
    return pred


def metrics(logits, y, ref_pred, ref64):
    pred = predictions(logits)
    diff = (logits.double() - ref64)
    finite = torch.isfinite(diff)
    rel = (diff.norm() / ref64.norm()).item() if finite.all() else float("inf")
    return dict(top1=(pred == y).double().mean().item(), agree=(pred == ref_pred).double().mean().item(),
                rel_l2=rel, logit_nan=int(torch.isnan(logits).sum()), logit_inf=int(torch.isinf(logits).sum()))


def evaluate_config(model, x, y, ref_pred, ref64, transform, preset, backend="emulation", batch=500,
                    v_scale="image"):
    import copy
    nova_make = nova_factory() if backend in ("nova", "auto") else None
    if backend == "nova" and nova_make is None:
        raise RuntimeError("--backend nova: the nova Python package (nova.torch) does not import; "
                           "build and install it (pip install . in the repository root, as the README says) or use --backend emulation")
    paths = set()

    def make(conv):
        mod = nova_make(conv, transform, preset) if nova_make is not None else None
        if mod is None:
            if backend == "nova":
                raise RuntimeError(f"--backend nova: nova's engine does not implement preset {preset!r} / "
                                   f"transform {transform.name!r} yet; use --backend auto or emulation")
            mod = EmulatedWinogradConv2d(conv, transform, preset, v_scale)
            paths.add("emulation")
        else:
            paths.add("nova")
        return mod

    m, report = replace_convs(copy.deepcopy(model), make)
    t0 = time.perf_counter()
    logits = run_logits(m, x, batch)
    dt = time.perf_counter() - t0
    res = metrics(logits, y, ref_pred, ref64)
    layers = [mod for mod in m.modules() if isinstance(mod, EmulatedWinogradConv2d)]
    res.update(layer_nan=sum(l.stats.nan for l in layers), layer_inf=sum(l.stats.inf for l in layers),
               replaced=sum(r["replaced"] for r in report), skipped=sum(not r["replaced"] for r in report),
               path="+".join(sorted(paths)), seconds=round(dt, 2))
    return res, report


def fmt_table(rows):
    head = ("| net | tile | points | preset | top-1 % | agree % | rel L2 logits | NaN/Inf (layers) | path |\n"
            "|---|---|---|---|---:|---:|---:|---:|---|")
    lines = [head]
    for r in rows:
        lines.append(f"| {r['arch']} | {r['tile']} | {r['points']} | {r['preset']} | {100 * r['top1']:.2f} | "
                     f"{100 * r['agree']:.2f} | {r['rel_l2']:.2e} | {r['layer_nan']}/{r['layer_inf']} | {r['path']} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="vgg,resnet")
    ap.add_argument("--tiles", default="4,6,8", help="output tile sizes m of F(m,3)")
    ap.add_argument("--points", default="all",
                    help="point-set names (see winograd_ref.POINT_SETS; '+bal' suffix = power-of-two balanced; "
                         "'catalogue' = nova's catalogue entry for the tile and preset; 'practitioners' = the "
                         "shipped set of each tile, winograd_ref.PRACTITIONERS), or 'all' (each published set "
                         "as published and balanced, then the catalogue), 'published', or 'grid' (standard, "
                         "practitioners, seed nova, catalogue: the issue's grid)")
    ap.add_argument("--presets", default=",".join(wr.EVAL_PRESETS))
    ap.add_argument("--limit", type=int, default=0, help="first N test images (0 = all 10 000)")
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--backend", choices=["emulation", "nova", "auto"], default="auto")
    ap.add_argument("--weights", type=Path, default=WEIGHTS, help="folder with vgg.pt / resnet.pt")
    ap.add_argument("--out", type=Path, default=None, help="JSON-lines results file (appended per config)")
    ap.add_argument("--markdown", type=Path, default=None, help="write the table here too")
    ap.add_argument("--resume", action="store_true",
                    help="skip configurations already in --out (same net, images, tile, points, preset, V scale)")
    ap.add_argument("--int8-v-scale", choices=list(wr.V_SCALES), default="image",
                    help="int8 presets: V's scale per image (default; batch-size independent) or per tensor "
                         "over the batch (nova's C++ definition)")
    args = ap.parse_args(argv)

    # a negative --limit sliced img[:limit]: all but the last |limit| images
    script_checks.require_at_least(ap, ("--limit", args.limit, 0), ("--batch", args.batch, 1),
                                   ("--threads", args.threads, 1))
    script_checks.require_archs(ap, args.arch)
    torch.set_num_threads(args.threads)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    for p in presets:
        if p not in wr.PRESETS:
            ap.error(f"unknown preset {p!r}; known: {', '.join(wr.PRESETS)}")
    try:
        tiles = [int(t) for t in args.tiles.split(",")]
    except ValueError:
        ap.error(f"--tiles wants comma-separated integers, got {args.tiles!r}")
    for t in tiles:
        if t not in TILES:
            ap.error(f"tile {t} not evaluated; choose from {sorted(TILES)}")

    def defined(p, mm, rr):
        if p == "practitioners":  # F(7,3): none shipped
            return (mm, rr) in wr.PRACTITIONERS
        return p == "catalogue" or p.startswith("catalogue:") or \
            p.removesuffix("+bal") in wr.POINT_SETS[(mm, rr)]
    if args.points not in ("all", "published", "grid"):
        for p in (p.strip() for p in args.points.split(",")):
            if not any(defined(p, *TILES[t]) for t in tiles):  # it would run nothing, silently
                known = sorted({n for t in tiles for n in wr.POINT_SETS[TILES[t]]} | {"practitioners"})
                named = ", ".join("F(%d,%d)" % TILES[t] for t in tiles)
                ap.error(f"unknown point set {p!r} for tile(s) {named}; known: {', '.join(known)}, catalogue, "
                         f"catalogue:<preset>, a name with '+bal', or all, published, grid")
    out = args.out
    # before the run, not after it; --out is kept (the rows are appended to it)
    script_checks.require_writable(ap, "--out", out, keep=True, make_parents=True)
    script_checks.require_writable(ap, "--markdown", args.markdown, make_parents=True)
    if args.resume and not out:
        ap.error("--resume needs --out")
    if args.backend == "nova":  # what evaluate_config would refuse after the configurations before it
        if nova_factory() is None:
            ap.error("--backend nova: the nova Python package (nova.torch) does not import; build and install it "
                     "or use --backend emulation")
        other = [p for p in presets if p != "fp32"]
        bal = ([p for p in args.points.split(",") if p.strip().endswith("+bal")] if args.points != "all"
               else ["all (its '+bal' sets)"])
        if other or bal:
            ap.error(f"--backend nova: nova's engine runs the fp32 preset on unbalanced point sets only "
                     f"(asked: {', '.join(other + bal)}); use --backend auto (emulation for the rest) or emulation")

    def key(row):
        vs = row.get("int8_v_scale", "image") if str(row["preset"]).startswith("int8") else "-"
        return (row["arch"], row["images"], row["tile"], row["points"], row["preset"], vs)

    def done_keys():
        if not (args.resume and out and out.is_file()):
            return set()
        keys = set()
        for line in out.read_text().splitlines():
            try:
                keys.add(key(json.loads(line)))
            except (ValueError, KeyError):
                continue  # a line cut short by a killed run: the configuration runs again
        return keys

    def append(row):
        if out:
            with open(out, "a") as f:  # one complete line per write
                f.write(json.dumps(row) + "\n")

    rows = []
    t_all = time.perf_counter()
    meta = dict(machine=platform.machine(), cpu=machine.cpu_name(), threads=args.threads, torch=torch.__version__,
                loadavg_start=os.getloadavg()[0])
    skipped_done = 0
    for arch in args.arch.split(","):
        model, info = load_model(arch, args.weights)
        x, y = load_test(info, args.limit)
        ref32 = run_logits(model, x, args.batch)
        ref_pred = predictions(ref32)
        import copy
        m64 = copy.deepcopy(model).double()
        ref64 = run_logits(m64, x.double(), args.batch)
        base = dict(arch=arch, images=len(y))
        direct = dict(base, tile="direct", points="-", preset="fp32", path="torch", layer_nan=0, layer_inf=0,
                      **{k: v for k, v in metrics(ref32, y, ref_pred, ref64).items()})
        rows.append(direct)
        print(f"# {arch}: {len(y)} test images; FP32 direct top-1 {100 * direct['top1']:.2f}%, "
              f"rel L2 vs float64 direct {direct['rel_l2']:.2e}", flush=True)
        _, report = replace_convs(copy.deepcopy(model), lambda c: c)
        for r in report:
            print(f"#   {r['layer']:28s} {str(r['shape']):18s} "
                  f"{'eligible' if r['replaced'] else 'skipped: ' + r['reason']}", flush=True)
        if key(direct) not in done_keys():
            append(dict(direct, meta=meta, layers=report))
        for tile in tiles:
            mm, rr = TILES[tile]
            names = list(wr.POINT_SETS[(mm, rr)])
            if args.points == "all":
                sel = [v for nme in names for v in (nme, nme + "+bal")] + ["catalogue"]
            elif args.points == "published":
                sel = names
            elif args.points == "grid":
                sel = wr.GRID_POINTS[(mm, rr)]
            else:
                sel = []
                absent = [p.strip() for p in args.points.split(",") if not defined(p.strip(), mm, rr)]
                if absent:
                    print(f"# F({mm},{rr}): no point set {', '.join(absent)} for this tile, skipped", flush=True)
                for p in (p.strip() for p in args.points.split(",")):
                    if p == "practitioners" and (mm, rr) != (6, 3):
                        p = wr.PRACTITIONERS.get((mm, rr), "")  # F(7,3): none shipped
                    if p and (p.removesuffix("+bal") in names or p == "catalogue" or p.startswith("catalogue:")):
                        sel.append(p)
            for pname in sel:
                for preset in presets:
                    vs = args.int8_v_scale if preset.startswith("int8") else None
                    probe = dict(base, tile=f"F({mm},{rr})", points=pname, preset=preset)
                    if vs:
                        probe["int8_v_scale"] = vs
                    if key(probe) in done_keys():
                        skipped_done += 1
                        continue
                    t = wr.point_set(mm, rr, pname, preset)
                    res, _ = evaluate_config(model, x, y, ref_pred, ref64, t, preset, args.backend, args.batch,
                                             v_scale=vs or "image")
                    row = dict(probe, **res)
                    rows.append(row)
                    print(f"{arch:6s} F({mm},{rr}) {pname:20s} {preset:13s} top1 {100 * res['top1']:6.2f} "
                          f"agree {100 * res['agree']:6.2f} relL2 {res['rel_l2']:.2e} "
                          f"nan/inf {res['layer_nan']}/{res['layer_inf']} [{res['path']}, {res['seconds']:.1f}s]",
                          flush=True)
                    extra = dict(points_exact=t.points_str())
                    if t.origin:
                        extra.update(catalogue_id=t.origin["id"], catalogue_preset=t.origin["preset"])
                    append(dict(row, **extra))
    total = time.perf_counter() - t_all
    table = fmt_table(rows)
    print()
    print(table)
    print(f"\nwall time {total:.0f} s on {meta['cpu']} ({args.threads} threads, load average at start "
          f"{meta['loadavg_start']:.2f}, at end {os.getloadavg()[0]:.2f}); torch {torch.__version__}"
          + (f"; {skipped_done} configurations already in {out} skipped" if skipped_done else ""))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table + f"\n\nwall time {total:.0f} s, {meta['cpu']}, {args.threads} threads, "
                                 f"load average at start {meta['loadavg_start']:.2f}, torch {torch.__version__}\n")
    return rows


if __name__ == "__main__":
    try:
        main()
    except (OSError, fashion_mnist.IDXError) as e:  # missing or malformed data, weights, unwritable output
        sys.exit(f"evaluate.py: {e}")
