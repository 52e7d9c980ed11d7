"""Export real activations and weights of the validation networks' eligible convolutions as .npy.

    .venv/bin/python validation/export_npy.py            # -> validation/data/<arch>_<layer>/
    nova error --tile 6,3 --points ... --precision fp16-storage --data validation/data/vgg_features.2

Each folder holds, float32, C order:
    input.npy    [N, C, H, W]  the layer's input (unpadded) for the first N Fashion-MNIST test images
    weights.npy  [K, C, 3, 3]  the layer's weights (for the ResNet: batch norm already folded in)
    bias.npy     [K]           its bias
    meta.json    layer name, shape, padding (PyTorch Conv2d semantics), image indices, source weights
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import evaluate  # noqa: E402
import script_checks  # noqa: E402


def export(arch: str, out: Path, n_images: int, weights_dir: Path) -> list[dict]:
    model, info = evaluate.load_model(arch, weights_dir)
    x, _ = evaluate.load_test(info, n_images)
    captured = {}
    hooks = []
    _, report = evaluate.replace_convs(model, lambda c: c)  # identity: only the eligibility report
    eligible = {r["layer"] for r in report if r["replaced"]}
    for name, mod in model.named_modules():
        if name in eligible:
            hooks.append(mod.register_forward_hook(
                lambda m, inp, outp, name=name: captured.__setitem__(name, inp[0].detach().clone())))
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    rows = []
    mods = dict(model.named_modules())
    for name in sorted(eligible, key=lambda n: list(mods).index(n)):
        conv = mods[name]
        d = out / f"{arch}_{name}"
        d.mkdir(parents=True, exist_ok=True)
        inp = captured[name].numpy().astype(np.float32)
        w = conv.weight.detach().numpy().astype(np.float32)
        b = (conv.bias.detach().numpy() if conv.bias is not None else np.zeros(w.shape[0])).astype(np.float32)
        np.save(d / "input.npy", np.ascontiguousarray(inp))
        np.save(d / "weights.npy", np.ascontiguousarray(w))
        np.save(d / "bias.npy", b)
        meta = dict(network=arch, layer=name, input_shape=list(inp.shape), weight_shape=list(w.shape),
                    padding=int(conv.padding[0]), stride=1, images=f"Fashion-MNIST t10k[0:{n_images}]",
                    weights=f"validation/weights/{arch}.pt",
                    weights_sha256=hashlib.sha256((weights_dir / f"{arch}.pt").read_bytes()).hexdigest(),
                    input_absmax=float(np.abs(inp).max()), input_mean=float(inp.mean()),
                    weight_absmax=float(np.abs(w).max()))
        (d / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        rows.append(meta)
        print(f"{d}: input {inp.shape} |x|max {meta['input_absmax']:.2f}, weights {w.shape}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="vgg,resnet")
    ap.add_argument("--images", type=int, default=8)
    ap.add_argument("--out", type=Path, default=HERE / "data")
    ap.add_argument("--weights", type=Path, default=evaluate.WEIGHTS)
    args = ap.parse_args(argv)
    if args.images < 1:
        ap.error("--images must be >= 1")
    script_checks.require_archs(ap, args.arch)
    torch.set_num_threads(2)
    for arch in args.arch.split(","):
        export(arch, args.out, args.images, args.weights)
    total = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"total {total / 1e6:.2f} MB in {args.out}")


if __name__ == "__main__":
    try:
        main()
    except (OSError, evaluate.fashion_mnist.IDXError) as e:  # missing or malformed data, weights, unwritable output
        sys.exit(f"export_npy.py: {e}")
