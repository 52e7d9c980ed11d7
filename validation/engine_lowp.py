"""Network-level accuracy of nova's ENGINE in low precision (issue 6's network target).

    .venv/bin/python validation/engine_lowp.py [--limit N] [--arch vgg,resnet] [--tiles 4,6] \\
        [--precisions fp32,bf16,fp16,int8] [--out validation/results/engine_lowp.jsonl]

Every eligible convolution is replaced through nova.torch.replace_conv2d(model, tile, precision): the
engine's own bf16 / fp16 / int8 GEMMs (no emulation), each layer with nova's catalogue transform for its
tile and precision (bf16-storage, fp16-storage, int8-tap entries; the fp32 engine default for fp32).
Reports top-1, agreement with the FP32 direct model, the logits' relative L2 error against a float64
direct model, NaN/Inf counts, and the drop in top-1 against the FP32 direct model.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import evaluate  # noqa: E402
import machine  # noqa: E402
import script_checks  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="vgg,resnet")
    ap.add_argument("--tiles", default="4,6",
                    help="m of F(m,3): 4, 6, 8; or auto (the engine's choice per layer, its fp32 default transforms)")
    ap.add_argument("--precisions", default="fp32,bf16,fp16,int8")
    ap.add_argument("--limit", type=int, default=0, help="first N test images (0: all 10 000)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    if args.limit < 0:
        ap.error(f"--limit must be 0 or more, got {args.limit}")
    if args.threads < 1:
        ap.error(f"--threads must be 1 or more, got {args.threads}")
    script_checks.require_archs(ap, args.arch)
    for m in args.tiles.split(","):
        if m not in ("2", "4", "6", "7", "8", "auto"):  # the engine's default F(m,3) transforms
            ap.error(f"--tiles: no F({m},3) in the engine; choose from 2, 4, 6, 7, 8, auto")
    try:
        import nova.torch as nt
    except Exception as e:  # noqa: BLE001
        print(f"engine_lowp: the nova package does not import ({e}); `pip install .` first", file=sys.stderr)
        return 2
    for p in args.precisions.split(","):
        try:
            nt._engine_precision(p)
        except ValueError as e:
            ap.error(f"--precisions: {e}")
    # before the work, not after the first configuration; kept: the rows are appended to it
    script_checks.require_writable(ap, "--out", args.out, keep=True)
    torch.set_num_threads(args.threads)
    rows = []
    for arch in args.arch.split(","):
        model, info = evaluate.load_model(arch)
        x, y = evaluate.load_test(info, args.limit)
        with torch.no_grad():
            ref64 = evaluate.run_logits(copy.deepcopy(model).double(), x.double(), 500)
            ref32 = evaluate.run_logits(model, x, 500)
        ref_pred = evaluate.predictions(ref32)
        base = evaluate.metrics(ref32, y, ref_pred, ref64)
        print(f"{arch}: FP32 direct top-1 {100 * base['top1']:.2f} % on {len(y)} images", flush=True)
        for m in args.tiles.split(","):
            for precision in args.precisions.split(","):
                net = copy.deepcopy(model)
                tile = "auto" if m == "auto" else f"{m},3"
                report = nt.replace_conv2d(net, tile=tile, precision=precision, threads=args.threads)
                t0 = time.perf_counter()
                logits = evaluate.run_logits(net, x, 500)
                seconds = time.perf_counter() - t0
                res = evaluate.metrics(logits, y, ref_pred, ref64)
                res.update(arch=arch, tile="auto" if m == "auto" else f"F({m},3)", precision=precision, images=len(y),
                           replaced=len(report.replaced), skipped=len(report.skipped),
                           drop_points=round(100 * (base["top1"] - res["top1"]), 2), seconds=round(seconds, 2),
                           path="nova engine", cpu=machine.cpu_name())
                rows.append(res)
                print(f"  {res['tile']} {precision:5s} top-1 {100 * res['top1']:.2f} % (drop {res['drop_points']:+.2f}) "
                      f"agree {100 * res['agree']:.2f} % rel L2 {res['rel_l2']:.2e} NaN {res['logit_nan']} "
                      f"Inf {res['logit_inf']} ({seconds:.1f} s)", flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(res) + "\n")
    print("\n| net | tile | precision | top-1 % | drop vs FP32 direct | agree % | rel L2 logits | NaN/Inf |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['arch']} | {r['tile']} | {r['precision']} | {100 * r['top1']:.2f} | {r['drop_points']:+.2f} | "
              f"{100 * r['agree']:.2f} | {r['rel_l2']:.2e} | {r['logit_nan']}/{r['logit_inf']} |")
    print(f"\nnova's engine on {machine.cpu_name()}, {args.threads} thread(s); Fashion-MNIST test images as listed "
          f"per network; rel L2 of the logits against a float64 direct model")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, evaluate.fashion_mnist.IDXError) as e:  # missing or malformed data, weights, unwritable output
        sys.exit(f"engine_lowp.py: {e}")
