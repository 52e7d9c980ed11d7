"""Train the validation networks on Fashion-MNIST with PyTorch on the CPU (fixed seeds).

    .venv/bin/python validation/train.py --arch vgg      # -> validation/weights/vgg.pt
    .venv/bin/python validation/train.py --arch resnet   # -> validation/weights/resnet.pt (BN folded)

Each run prints and records (in the weights file and validation/weights/<arch>.json) the wall time,
the machine load, and the FP32 direct test accuracy on the full 10 000-image test set.
"""
from __future__ import annotations

import os

# Under CPU contention (this machine is shared with compilers), OpenMP's default busy-waiting makes a
# 2-thread torch run about 5x slower than 1 thread (measured); passive waiting removes that.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fashion_mnist  # noqa: E402
import machine  # noqa: E402
import models  # noqa: E402
import script_checks  # noqa: E402

SEED = 20261122


def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1000):
    model.eval()
    logits = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            logits.append(model(x[i:i + batch]))
    logits = torch.cat(logits)
    return (logits.argmax(1) == y).double().mean().item(), logits


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", choices=["vgg", "resnet"], required=True)
    ap.add_argument("--epochs", type=int, default=None, help="default: vgg 6, resnet 5")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--limit", type=int, default=0, help="train on the first N images only (smoke test)")
    ap.add_argument("--out", type=Path, default=HERE / "weights")
    args = ap.parse_args(argv)
    # --epochs 0 trained the default 6; --limit -5 all but 5 images
    script_checks.require_at_least(ap, ("--epochs", args.epochs, 1), ("--batch", args.batch, 1),
                                   ("--threads", args.threads, 1), ("--limit", args.limit, 0))
    if not args.limit:  # the weights are saved: find out now, not after the training
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            ap.error(f"--out: cannot create {str(args.out)!r}: {e.strerror}")
        if not os.access(args.out, os.W_OK):
            ap.error(f"--out: cannot write in {str(args.out)!r}")
    epochs = args.epochs if args.epochs is not None else (6 if args.arch == "vgg" else 5)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)

    tr_img, tr_lab = fashion_mnist.load("train")
    te_img, te_lab = fashion_mnist.load("test")
    mean = float(tr_img.mean() / 255.0)
    std = float((tr_img / 255.0).std())
    xtr = torch.from_numpy(fashion_mnist.to_float(tr_img, mean, std))
    ytr = torch.from_numpy(tr_lab)
    xte = torch.from_numpy(fashion_mnist.to_float(te_img, mean, std))
    yte = torch.from_numpy(te_lab)
    if args.limit:
        xtr, ytr = xtr[:args.limit], ytr[:args.limit]

    model = models.build(args.arch)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
    steps_per_epoch = (len(xtr) + args.batch - 1) // args.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=epochs * steps_per_epoch,
                                                pct_start=0.15)
    gen = torch.Generator().manual_seed(args.seed)
    load0 = loadavg()
    t0 = time.perf_counter()
    log = []
    for ep in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr), generator=gen)
        tot, correct, lsum = 0, 0, 0.0
        te = time.perf_counter()
        for i in range(0, len(xtr), args.batch):
            idx = perm[i:i + args.batch]
            xb, yb = xtr[idx], ytr[idx]
            # augmentation: random horizontal flip, random shift by up to 2 pixels
            flip = torch.rand(len(xb), generator=gen) < 0.5
            xb = torch.where(flip.view(-1, 1, 1, 1), xb.flip(3), xb)
            dx, dy = (int(v) for v in torch.randint(-2, 3, (2,), generator=gen))
            xb = torch.roll(xb, shifts=(dy, dx), dims=(2, 3))
            out = model(xb)
            loss = F.cross_entropy(out, yb, label_smoothing=0.05)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            tot += len(yb)
            correct += (out.argmax(1) == yb).sum().item()
            lsum += loss.item() * len(yb)
        rec = dict(epoch=ep + 1, train_loss=round(lsum / tot, 4), train_acc=round(correct / tot, 4),
                   epoch_s=round(time.perf_counter() - te, 1), loadavg_1m=round(loadavg()[0], 2))
        log.append(rec)
        print(json.dumps(rec), flush=True)
    train_s = time.perf_counter() - t0
    load1 = loadavg()

    model.eval()
    acc_train_model, _ = evaluate(model, xte, yte)
    infer = models.fold_bn(model) if args.arch == "resnet" else model
    acc, logits = evaluate(infer, xte, yte)
    info = dict(
        arch=args.arch, seed=args.seed, epochs=epochs, batch=args.batch, lr=args.lr, threads=args.threads,
        train_images=len(xtr), train_wall_s=round(train_s, 1),
        loadavg_start=[round(v, 2) for v in load0], loadavg_end=[round(v, 2) for v in load1],
        test_acc_fp32_direct=acc, test_acc_before_fold=acc_train_model,
        test_images=len(yte), norm_mean=mean, norm_std=std,
        torch=torch.__version__, python=platform.python_version(), machine=platform.machine(),
        cpu=machine.cpu_name(), nproc=os.cpu_count(), bn_folded=args.arch == "resnet", log=log,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.limit:
        path = args.out / f"{args.arch}.pt"
        torch.save({"arch": args.arch, "state_dict": infer.state_dict(), "info": info}, path)
        (args.out / f"{args.arch}.json").write_text(json.dumps(info, indent=1) + "\n")
        print(f"saved {path} ({path.stat().st_size / 1e6:.2f} MB)")
    else:
        print(f"--limit {args.limit}: a smoke test, nothing saved")
    print(f"{args.arch}: trained {epochs} epochs in {train_s:.1f} s; FP32 direct test accuracy {acc * 100:.2f}% "
          f"(before folding {acc_train_model * 100:.2f}%); load {load0[0]:.2f} -> {load1[0]:.2f}")
    return info


if __name__ == "__main__":
    try:
        main()
    except (OSError, fashion_mnist.IDXError) as e:  # missing or malformed data, weights, unwritable output
        sys.exit(f"train.py: {e}")
