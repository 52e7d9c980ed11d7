"""Batch-norm folding: the folded network equals the unfolded one in eval mode."""
import torch
import torch.nn as nn
import pytest

import models


def randomize_bn(model, seed):
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.rand(n, generator=g) - 0.5)
            m.running_var.copy_(torch.rand(n, generator=g) * 2 + 0.1)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.rand(n, generator=g) - 0.5)
    return model


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
def test_fold_bn_equals_unfolded_resnet(dtype, tol):
    torch.manual_seed(0)
    model = randomize_bn(models.ResNet(), 1).eval().to(dtype)
    folded = models.fold_bn(model)
    assert not any(isinstance(m, nn.BatchNorm2d) for m in folded.modules())
    assert any(isinstance(m, nn.BatchNorm2d) for m in model.modules())  # the original is untouched
    x = torch.randn(7, 1, 28, 28, dtype=dtype)
    with torch.no_grad():
        a, b = model(x), folded(x)
    assert ((a - b).norm() / a.norm()).item() < tol


def test_fold_conv_bn_with_conv_bias_and_odd_shapes():
    torch.manual_seed(3)
    conv = nn.Conv2d(3, 5, 3, padding=1, bias=True).double()
    bn = randomize_bn(nn.Sequential(nn.BatchNorm2d(5)), 2)[0].double().eval()
    folded = models.fold_conv_bn(conv, bn)
    x = torch.randn(2, 3, 9, 11, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(folded(x), bn(conv(x)), rtol=1e-12, atol=1e-12)


def test_fold_is_not_identity_in_train_mode():
    """The fold uses running statistics: in train mode (batch statistics) the outputs differ."""
    torch.manual_seed(0)
    model = randomize_bn(models.ResNet(), 1)
    folded = models.fold_bn(model)
    x = torch.randn(16, 1, 28, 28)
    model.train()
    with torch.no_grad():
        assert not torch.allclose(model(x), folded(x), rtol=1e-3, atol=1e-3)


def test_fold_bad_input():
    with pytest.raises(ValueError, match="features"):
        models.fold_conv_bn(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(3))
    with pytest.raises(TypeError):
        models.fold_conv_bn(nn.Linear(2, 2), nn.BatchNorm2d(2))
