"""The two validation networks for Fashion-MNIST, and batch-norm folding.

* ``VGGNet``: six 3x3 convolutions (stride 1, padding 1), ReLU, max-pooling, no batch norm.
* ``ResNet``: a small ResNet (BasicBlocks with batch norm). Two of its 3x3 convolutions have
  stride 2 and its shortcuts are 1x1 convolutions: those are *not* Winograd-eligible and are
  reported as skipped by the evaluation. ``fold_bn`` turns a trained ResNet into an inference
  network whose batch norms are folded into the preceding convolutions.
"""
from __future__ import annotations

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class VGGNet(nn.Module):
    def __init__(self, widths=(16, 16, 32, 32, 64, 64), num_classes=10):
        super().__init__()
        w = widths
        layers = []
        cin = 1
        # pools after conv 2 (28->14) and conv 4 (14->7); the remaining convs run at 7x7
        for i, c in enumerate(w):
            layers += [nn.Conv2d(cin, c, 3, padding=1), nn.ReLU(inplace=True)]
            if i in (1, 3):
                layers.append(nn.MaxPool2d(2))
            cin = c
        self.features = nn.Sequential(*layers)
        # 7x7 -> 3x3 max-pool, then one linear layer on the 3x3 map
        self.classifier = nn.Sequential(nn.MaxPool2d(2), nn.Flatten(), nn.Linear(cin * 9, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths=(8, 16, 32), blocks=(1, 1, 1), num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, widths[0], 3, padding=1, bias=False),
                                  nn.BatchNorm2d(widths[0]), nn.ReLU(inplace=True))
        stages = []
        cin = widths[0]
        for s, (c, nb) in enumerate(zip(widths, blocks)):
            for b in range(nb):
                stride = 2 if (s > 0 and b == 0) else 1
                stages.append(BasicBlock(cin, c, stride))
                cin = c
        self.layers = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


ARCHS = {"vgg": VGGNet, "resnet": ResNet}  # the validation networks by name


def build(arch: str) -> nn.Module:
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r} (expected 'vgg' or 'resnet')")
    return ARCHS[arch]()


@torch.no_grad()
def fold_conv_bn(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Conv2d:
    """Return a new Conv2d equal to bn(conv(x)) with bn in eval mode (running statistics).

    W' = W * gamma / sqrt(var + eps) (per output channel),
    b' = beta + (b - mean) * gamma / sqrt(var + eps).
    """
    if not isinstance(conv, nn.Conv2d) or not isinstance(bn, nn.BatchNorm2d):
        raise TypeError("fold_conv_bn expects (nn.Conv2d, nn.BatchNorm2d)")
    if bn.num_features != conv.out_channels:
        raise ValueError(f"BatchNorm2d has {bn.num_features} features, conv has {conv.out_channels} outputs")
    if not bn.track_running_stats or bn.running_mean is None:
        raise ValueError("cannot fold a BatchNorm2d without running statistics")
    w = conv.weight.double()
    b = conv.bias.double() if conv.bias is not None else torch.zeros(conv.out_channels, dtype=torch.float64)
    gamma = bn.weight.double() if bn.affine else torch.ones_like(b)
    beta = bn.bias.double() if bn.affine else torch.zeros_like(b)
    scale = gamma / torch.sqrt(bn.running_var.double() + bn.eps)
    folded = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, stride=conv.stride,
                       padding=conv.padding, dilation=conv.dilation, groups=conv.groups, bias=True,
                       padding_mode=conv.padding_mode, dtype=conv.weight.dtype)
    folded.weight.copy_((w * scale.view(-1, 1, 1, 1)).to(conv.weight.dtype))
    folded.bias.copy_((beta + (b - bn.running_mean.double()) * scale).to(conv.weight.dtype))
    return folded


def fold_bn(model: nn.Module) -> nn.Module:
    """Deep-copy a ResNet (or any model made of these blocks) with every BN folded into its conv.

    The copy is in eval mode; BatchNorm2d modules are replaced by nn.Identity.
    """
    m = copy.deepcopy(model).eval()
    for mod in m.modules():
        if isinstance(mod, BasicBlock):
            mod.conv1 = fold_conv_bn(mod.conv1, mod.bn1)
            mod.bn1 = nn.Identity()
            mod.conv2 = fold_conv_bn(mod.conv2, mod.bn2)
            mod.bn2 = nn.Identity()
            if len(mod.shortcut) == 2:
                mod.shortcut = nn.Sequential(fold_conv_bn(mod.shortcut[0], mod.shortcut[1]))
        elif isinstance(mod, nn.Sequential):
            for i in range(len(mod) - 1):
                if isinstance(mod[i], nn.Conv2d) and isinstance(mod[i + 1], nn.BatchNorm2d):
                    mod[i] = fold_conv_bn(mod[i], mod[i + 1])
                    mod[i + 1] = nn.Identity()
    left = [n for n, x in m.named_modules() if isinstance(x, nn.BatchNorm2d)]
    if left:
        raise RuntimeError(f"fold_bn: batch norms not folded: {left}")
    return m
