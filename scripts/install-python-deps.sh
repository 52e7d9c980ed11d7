#!/usr/bin/env bash
# Install what nova's Python side needs: a virtual environment at .venv (git-ignored) with
# PyTorch (CPU use; a current 2.x from PyPI), numpy, pytest and mypy (the stubs' test), plus the Fashion-MNIST data
# (Debian package dataset-fashion-mnist, files in /usr/share/datasets/fashion-mnist).
#
# Idempotent: when .venv already imports the pinned versions and the data files exist, it
# returns in about a second without touching the network.
#
# Cost on a fresh machine (measured 2026-11-22, Debian 12, 2 cores): PyPI's only Linux x86_64
# torch wheels are the CUDA builds, and `import torch` fails without their CUDA libraries
# (libcufile.so.0 etc.), so the full dependency set is installed: about 2.5 GB downloaded,
# 5.4 GB on disk, about 70 s. There is no CPU-only wheel on PyPI; the CPU wheel index of the
# PyTorch project is not reachable from this project's machines.
#
# Environment:
#   NOVA_VENV        where to put the venv (default: <repo>/.venv)
#   NOVA_PYTHON      interpreter to create it with (default: python3)
#   NOVA_SKIP_DATA=1 do not apt-get the data set
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${NOVA_VENV:-$REPO/.venv}"
PY="${NOVA_PYTHON:-python3}"
TORCH_VERSION="2.15.0"
NUMPY_VERSION="2.4.6"
PYTEST_VERSION="9.2.0"
MYPY_VERSION="2.4.1"
DATA_DIR=/usr/share/datasets/fashion-mnist

log() { echo "install-python-deps: $*" >&2; }

# --- data -------------------------------------------------------------------------------------
if [[ "${NOVA_SKIP_DATA:-0}" != 1 ]]; then
  if [[ -f "$DATA_DIR/t10k-images-idx3-ubyte.gz" && -f "$DATA_DIR/train-images-idx3-ubyte.gz" ]]; then
    log "Fashion-MNIST present in $DATA_DIR"
  else
    SUDO=""
    if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi
    log "installing dataset-fashion-mnist (apt-get)"
    $SUDO apt-get update -qq || $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq dataset-fashion-mnist
  fi
fi

# --- python -----------------------------------------------------------------------------------
check() {
  # metadata only (importing torch takes 5-15 s on a loaded machine); the tests import it anyway
  "$VENV/bin/python" - "$TORCH_VERSION" "$NUMPY_VERSION" "$PYTEST_VERSION" "$MYPY_VERSION" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
want = dict(zip(("torch", "numpy", "pytest", "mypy"), sys.argv[1:5]))
sys.exit(0 if all(version(k).split("+")[0] == v for k, v in want.items()) else 1)
PYEOF
}

if [[ -x "$VENV/bin/python" ]] && check; then
  log "$VENV already has torch $TORCH_VERSION, numpy $NUMPY_VERSION, pytest, mypy"
  exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
    log "$PY lacks venv/ensurepip; installing python3-venv (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  fi
  log "creating $VENV with $("$PY" --version 2>&1)"
  "$PY" -m venv "$VENV"
fi

start=$(date +%s)
log "pip install torch==$TORCH_VERSION numpy==$NUMPY_VERSION pytest==$PYTEST_VERSION mypy==$MYPY_VERSION (first time: ~2.5 GB, ~70 s)"
# --no-compile: pip would byte-compile every module of the wheels (torch has thousands), 33 of its 97 CPU
# seconds here while the test command's C++ trees build beside it; Python compiles the ones imported
# on first use instead (3.5 s more on the first `import torch`). Measured 2026-11-29, pip cache warm.
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-compile \
  "torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION" "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION"
check || { log "installed, but the version check still fails"; exit 1; }
"$VENV/bin/python" -c 'import torch, numpy; torch.ones(2) @ torch.ones(2)' || { log "torch does not import"; exit 1; }
log "done in $(( $(date +%s) - start )) s; venv size $(du -sh "$VENV" | cut -f1)"
