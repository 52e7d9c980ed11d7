"""The installed package is typed (PEP 561): the generated stubs of nova._nova are there, cover the whole
module, and let a type checker pass a correct program (numpy arrays and torch tensors alike; the program
then runs) and refuse wrong calls."""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import nova
from nova import _nova

STUB = Path(_nova.__file__).with_name("_nova.pyi")


def _stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), filename=str(STUB))


def test_stub_and_marker_are_installed_with_the_module():
    assert STUB.is_file(), f"no stub beside {_nova.__file__}"
    assert Path(nova.__file__).with_name("py.typed").is_file()


def test_stub_defines_every_public_name_and_member():
    tree = _stub_tree()
    top = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    public = [name for name in dir(_nova) if not name.startswith("_")]
    assert public, "the module exports nothing"
    missing = [name for name in public if name not in top]
    assert not missing, f"not in {STUB.name}: {missing}"
    for name in public:
        runtime = getattr(_nova, name)
        if not isinstance(runtime, type):
            continue
        members = {node.name for node in top[name].body if isinstance(node, ast.FunctionDef)}
        missing = [m for m in vars(runtime) if not m.startswith("_") and m not in members]
        assert not missing, f"{name} members not in the stub: {missing}"


def test_conv_plan_takes_its_options_by_keyword_only():
    # weights is required and comes after optional arguments: only keyword-only makes that a valid
    # signature (the stub once failed to parse for it) and a positional call an error, not a misreading.
    plan = [n for n in _stub_tree().body if isinstance(n, ast.ClassDef) and n.name == "ConvPlan"][0]
    init = [n for n in plan.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"][0]
    assert [a.arg for a in init.args.args] == ["self", "shape"]
    assert "weights" in [a.arg for a in init.args.kwonlyargs]
    with pytest.raises(TypeError):
        _nova.ConvPlan((1, 1, 4, 4, 1), (3, 3))


GOOD = """
    import numpy as np
    import torch
    import nova

    t = nova.Transform("6,3", "0,±1,±2,±1/2,inf")
    ok, reason = t.verify()
    kappa: float = nova.analyze(t)["matrices"]["V"]["1d"]["kappa2"]
    found, details = nova.discover("4,3", seed=1, budget_s=0.1)
    model = nova.precision_model("fp16-storage")
    measured = nova.error(t, model, tiles=100)["winograd"]["rel_l2"]
    w = np.zeros((4, 3, 3, 3), np.float32)
    plan = nova.ConvPlan((1, 3, 8, 8, 4), weights=w, precision="bf16")
    plan.execute(torch.zeros(1, 3, 8, 8), torch.empty(1, 4, 8, 8))
    plan.execute(np.zeros((1, 3, 8, 8), np.float32), np.empty((1, 4, 8, 8), np.float32))
    y, info = nova.cuda_emulate(torch.zeros(1, 3, 8, 8), w)
    print(ok, reason.upper(), kappa, found.tile, details["seed"], measured, plan.tile.upper(),
          plan.v_shift + 1, y.shape, info["v_shift"])
"""

# Each wrong line and the error code mypy must give for it.
BAD = {
    'nova.Transform("6,3", 5)': "arg-type",
    "nova.ConvPlan((1, 3, 8, 8, 4), w)": "call-arg",
    'nova.Transform("4,3").tile + 1': "operator",
    "nova.analyze(3)": "arg-type",
    'nova.error(nova.Transform("4,3"), tiles="many")': "arg-type",
    'nova.error(nova.Transform("4,3"), 16)': "arg-type",
}


def _mypy(tmp_path: Path, source: str, *packages: str) -> subprocess.CompletedProcess:
    (tmp_path / "program.py").write_text(textwrap.dedent(source))
    targets = ["-m", "program"] + [arg for package in packages for arg in ("-p", package)]
    # --no-incremental and a cache in tmp_path: nothing is read from or left in the checkout.
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", "--show-error-codes"] + targets,
        capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, MYPYPATH=str(tmp_path)), timeout=600)


def test_mypy_passes_a_correct_program_and_refuses_wrong_calls(tmp_path):
    pytest.importorskip("mypy", reason="mypy is installed by scripts/install-python-deps.sh")
    # The installed package's own Python (nova, nova.torch) is checked in the same run, against the stubs:
    # a typed package's annotations are what users' checkers read.
    good = _mypy(tmp_path, GOOD, "nova")
    assert good.returncode == 0, good.stdout + good.stderr
    # and the program it passed runs (the stubs' types are what the calls take and return)
    run = subprocess.run([sys.executable, str(tmp_path / "program.py")], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    bad_lines = ["import numpy as np", "import nova", "w = np.zeros((4, 3, 3, 3), np.float32)"]
    first = len(bad_lines) + 1
    bad = _mypy(tmp_path, "\n".join(bad_lines + list(BAD)) + "\n")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    for offset, (line, code) in enumerate(BAD.items()):
        expected = f"program.py:{first + offset}: error:"
        hits = [out for out in bad.stdout.splitlines() if out.startswith(expected) and f"[{code}]" in out]
        assert hits, f"mypy did not flag {line!r} with [{code}]:\n{bad.stdout}"
