"""The network-level validation: replacement, the fast slice, the exported .npy data."""
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

import evaluate
import winograd_ref as wr

VAL = Path(evaluate.__file__).resolve().parent
SLICE = 500


def test_replace_convs_reports_what_and_why():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),                 # eligible
        nn.Conv2d(8, 8, 5, padding=2),                 # eligible (5x5)
        nn.Conv2d(8, 8, 3, stride=2, padding=1),       # stride
        nn.Conv2d(8, 8, 3, dilation=2, padding=2),     # dilation
        nn.Conv2d(8, 8, 3, groups=2, padding=1),       # groups
        nn.Conv2d(8, 8, 1),                            # 1x1
        nn.Conv2d(8, 8, 3, padding=1, padding_mode="reflect"),
        nn.Conv2d(8, 8, 7, padding=3),                 # 7x7
    )
    seen = []
    _, report = evaluate.replace_convs(model, lambda c: seen.append(c) or nn.Identity())
    assert [r["replaced"] for r in report] == [True, True, False, False, False, False, False, False]
    reasons = [r.get("reason", "") for r in report]
    for i, word in [(2, "stride"), (3, "dilation"), (4, "groups"), (5, "1x1"), (6, "padding_mode"), (7, "7x7")]:
        assert word in reasons[i]
    assert isinstance(model[0], nn.Identity) and isinstance(model[2], nn.Conv2d) and len(seen) == 2


def test_emulated_module_equals_conv2d_and_caches_filter_transform():
    torch.manual_seed(0)
    conv = nn.Conv2d(6, 5, 3, padding=1)
    m = evaluate.EmulatedWinogradConv2d(conv, wr.point_set(6, 3, "practitioners"), "fp32")
    U0 = m.U
    x = torch.randn(3, 6, 11, 19)
    with torch.no_grad():
        torch.testing.assert_close(m(x), conv(x), rtol=2e-5, atol=2e-5)
    assert m.U is U0  # filter transformed once, reused


@pytest.fixture(scope="module", params=["vgg", "resnet"])
def net(request):
    model, info = evaluate.load_model(request.param)
    x, y = evaluate.load_test(info, SLICE)
    ref32 = evaluate.run_logits(model, x, 250)
    ref64 = evaluate.run_logits(model.double(), x.double(), 250)
    model.float()
    return request.param, model, info, x, y, ref32, ref64


def test_trained_weights_are_small_and_accurate(net):
    arch, model, info, x, y, ref32, _ = net
    path = VAL / "weights" / f"{arch}.pt"
    assert path.stat().st_size < 5e6
    # the recorded full-test-set accuracy of the committed weights is reproduced here
    full_x, full_y = evaluate.load_test(info, 0)
    acc = (evaluate.run_logits(model, full_x, 1000).argmax(1) == full_y).double().mean().item()
    assert acc == pytest.approx(info["test_acc_fp32_direct"], abs=1e-4)
    assert acc > 0.85  # a trained network (chance is 0.10)
    if arch == "resnet":  # folding did not change the accuracy by more than a flipped image or two
        assert abs(info["test_acc_before_fold"] - info["test_acc_fp32_direct"]) <= 2e-4


FP32_EXACT = [(4, "standard"), (6, "nova"), (8, "nova")]


@pytest.mark.parametrize("tile,points", FP32_EXACT)
def test_fast_slice_fp32_winograd_matches_direct_accuracy_exactly(net, tile, points):
    arch, model, info, x, y, ref32, ref64 = net
    ref_pred = evaluate.predictions(ref32)
    res, report = evaluate.evaluate_config(model, x, y, ref_pred, ref64, wr.point_set(tile, 3, points), "fp32",
                                           backend="emulation", batch=250)
    direct_top1 = (ref_pred == y).double().mean().item()
    assert res["top1"] == direct_top1
    assert res["agree"] >= 0.998
    assert res["layer_nan"] == res["layer_inf"] == 0
    assert 0 < res["rel_l2"] < 1e-3
    assert res["replaced"] == (6 if arch == "vgg" else 5)
    assert res["skipped"] == (0 if arch == "vgg" else 4)


@pytest.mark.parametrize("tile", [4, 6])
def test_fast_slice_catalogue_fp16_storage_stays_close(net, tile):
    """nova's catalogue entry for F(tile,3) and fp16-storage (data/catalogue.json: its exact points and its
    exact scaling) stays within 0.2 points of the FP32 direct model's top-1 on the 500-image slice.
    (F(8,3)'s entry does not on VGG's slice: docs/validation.md.)"""
    arch, model, info, x, y, ref32, ref64 = net
    ref_pred = evaluate.predictions(ref32)
    t = wr.point_set(tile, 3, "catalogue", "fp16-storage")
    assert t.origin["tile"] == f"F({tile},3)" and t.origin["preset"] == "fp16-storage"
    res, _ = evaluate.evaluate_config(model, x, y, ref_pred, ref64, t, "fp16-storage", backend="emulation", batch=250)
    assert res["layer_nan"] == res["layer_inf"] == 0
    assert abs(res["top1"] - (ref_pred == y).double().mean().item()) <= 0.002 + 1e-12


@pytest.mark.parametrize("arch", ["vgg", "resnet"])
def test_exported_npy_are_the_networks_real_layers(arch):
    model, info = evaluate.load_model(arch)
    mods = dict(model.named_modules())
    folders = sorted((VAL / "data").glob(f"{arch}_*"))
    assert folders, "run validation/export_npy.py"
    for d in folders:
        meta = json.loads((d / "meta.json").read_text())
        conv = mods[meta["layer"]]
        w = np.load(d / "weights.npy")
        inp = np.load(d / "input.npy")
        assert w.dtype == np.float32 and inp.dtype == np.float32 and inp.ndim == 4
        np.testing.assert_array_equal(w, conv.weight.detach().numpy())
        # the activations are what the layer sees: recompute them with a hook
        x, _ = evaluate.load_test(info, inp.shape[0])
        got = {}
        h = conv.register_forward_hook(lambda m, i, o: got.__setitem__("x", i[0]))
        with torch.no_grad():
            model(x)
        h.remove()
        # FP32 through the earlier layers sums in another order on another CPU (PyTorch's AVX2 and
        # AVX-512 kernels): 1.3e-6 apart on an AVX2 machine for files written on an AVX-512 one. Another
        # layer's activations would differ by O(1).
        np.testing.assert_allclose(inp, got["x"].numpy(), rtol=1e-5, atol=1e-5)
    total = sum(f.stat().st_size for f in (VAL / "data").rglob("*") if f.is_file())
    assert total < 8e6


def test_evaluate_grid_resume_and_v_scale(tmp_path, capsys):
    """--points grid runs standard, the tile's practitioners' set, seed nova and the catalogue entry of each
    preset; --resume skips what the output file already has; the V-scale definition is part of the key."""
    out = tmp_path / "r.jsonl"
    argv = ["--arch", "vgg", "--tiles", "4", "--points", "grid", "--presets", "fp16-storage,int8-tap",
            "--limit", "8", "--threads", "1", "--backend", "emulation", "--out", str(out), "--resume"]
    evaluate.main(argv)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    confs = [(r["points"], r["preset"]) for r in rows if r["tile"] != "direct"]
    assert confs == [(p, q) for p in wr.GRID_POINTS[(4, 3)] for q in ("fp16-storage", "int8-tap")]
    assert wr.GRID_POINTS[(4, 3)] == ["standard", wr.PRACTITIONERS[(4, 3)], "nova", "catalogue"]
    for r in rows:
        if r["points"] == "catalogue":
            e = wr.catalogue_entry(4, 3, r["preset"])
            assert r["catalogue_id"] == e["transform"]["id"] and r["points_exact"] == ",".join(e["points"])
        if r["preset"] == "int8-tap":
            assert r["int8_v_scale"] == "image"
    evaluate.main(argv)  # nothing left to do
    assert len(out.read_text().splitlines()) == len(rows)
    evaluate.main(argv + ["--int8-v-scale", "batch"])  # only the int8 rows of the other definition are new
    new = [json.loads(line) for line in out.read_text().splitlines()][len(rows):]
    assert [(r["points"], r["preset"], r["int8_v_scale"]) for r in new] == \
        [(p, "int8-tap", "batch") for p in wr.GRID_POINTS[(4, 3)]]


def test_backend_nova_without_the_package_names_a_working_install_command(monkeypatch):
    # python/ has no pyproject.toml: the package is built from the repository root (`pip install .`).
    monkeypatch.setattr(evaluate, "nova_factory", lambda: None)
    with pytest.raises(RuntimeError, match=r"pip install \. ") as e:
        evaluate.evaluate_config(None, None, None, None, None, None, "fp32", backend="nova")
    assert "./python" not in str(e.value)


@pytest.mark.parametrize("argv, message", [
    (["--points", "bogus"], "unknown point set 'bogus'"),  # ran nothing but the direct row, exit 0
    (["--tiles", "4", "--points", "tvm"], "unknown point set 'tvm'"),  # tvm is F(8,3)'s only
    (["--limit", "-5"], "--limit must be 0 or more"),  # evaluated all but the last 5 images
    (["--batch", "0"], "--batch must be 1 or more"),
    (["--threads", "0"], "--threads must be 1 or more"),
    (["--arch", "vgg,bogus"], "unknown --arch 'bogus'"),
])
def test_evaluate_refuses_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--backend", "emulation", "--presets", "fp32"] + argv)
    assert e.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(ValueError):
        evaluate.load_test({"norm_mean": 0.0, "norm_std": 1.0}, -5)


def test_evaluate_says_which_point_sets_a_tile_lacks(capsys):
    evaluate.main(["--arch", "vgg", "--tiles", "4,8", "--points", "tvm", "--presets", "fp32", "--limit", "4",
                   "--threads", "1", "--backend", "emulation"])
    out = capsys.readouterr().out
    assert "# F(4,3): no point set tvm for this tile, skipped" in out and "F(8,3) tvm" in out


@pytest.mark.parametrize("argv, message", [
    (["--epochs", "0"], "--epochs must be 1 or more"),  # trained the default 6 epochs
    (["--limit", "-5"], "--limit must be 0 or more"),  # trained on all but 5 images
    (["--batch", "0"], "--batch must be 1 or more"),
    (["--out", "/proc/nova-weights"], "--out: cannot create"),  # failed after the training
])
def test_train_refuses_bad_arguments(argv, message, capsys):
    import train
    with pytest.raises(SystemExit) as e:
        train.main(["--arch", "vgg"] + argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--tiles", "5"], "--tiles: no F(5,3) in the engine"),  # a ValueError traceback from nova.torch
    (["--precisions", "fp32,bogus"], "--precisions: precision 'bogus'"),  # after the fp32 rows
    (["--limit", "-5"], "--limit must be 0 or more"),
    (["--threads", "0"], "--threads must be 1 or more"),
    (["--arch", "bogus"], "unknown --arch 'bogus'"),
    (["--out", "/nonexistent/dir/r.jsonl"], "--out: cannot write"),  # after the first configuration
])
def test_engine_lowp_refuses_bad_arguments(argv, message, capsys):
    pytest.importorskip("nova.torch")
    import engine_lowp
    with pytest.raises(SystemExit) as e:
        engine_lowp.main(["--arch", "vgg", "--tiles", "4", "--precisions", "fp32", "--limit", "4"] + argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("opt", ["--out", "--markdown"])
def test_evaluate_refuses_unwritable_outputs_before_the_run(opt, capsys):
    """--markdown was written after the whole run (a traceback then), --out after the first configuration."""
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--arch", "vgg", "--tiles", "4", "--points", "nova", "--presets", "fp32", "--limit", "4",
                       "--backend", "emulation", opt, "/proc/nova-results/r.txt"])
    assert e.value.code == 2 and f"{opt}: cannot write" in capsys.readouterr().err


def test_evaluate_backend_nova_refuses_what_it_cannot_run_before_the_run(capsys):
    """--backend nova with a preset its engine does not run failed with a traceback after the fp32 rows."""
    pytest.importorskip("nova.torch")
    with pytest.raises(SystemExit) as e:
        evaluate.main(["--arch", "vgg", "--tiles", "4", "--points", "nova", "--presets", "fp32,fp16-storage",
                       "--limit", "4", "--backend", "nova"])
    assert e.value.code == 2 and "--backend nova: nova's engine runs the fp32 preset" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    ([], "usage: check_peer_onednn.py"),  # IndexError before
    (["a", "b"], "usage: check_peer_onednn.py"),
    (["/nonexistent/nova_peer_onednn"], "is not an executable file"),  # FileNotFoundError from subprocess
])
def test_check_peer_onednn_refuses_bad_arguments(argv, message):
    import subprocess
    import sys
    script = Path(__file__).resolve().parents[2] / "bench" / "peers" / "check_peer_onednn.py"
    r = subprocess.run([sys.executable, str(script)] + argv, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and message in r.stderr and "Traceback" not in r.stderr
