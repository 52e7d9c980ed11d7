#!/usr/bin/env bash
# The Python side of the test command: a venv with PyTorch (scripts/install-python-deps.sh), the nova
# package built and installed with `pip install .`, then pytest over python/tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-python-deps.sh
# The same compiler and ccache base as scripts/build.sh, so that the package's library objects are
# ccache hits from the release tree (scikit-build-core would otherwise pick g++ by another name).
export CXX="${CXX:-c++}" CCACHE_BASEDIR="$PWD"
py="${NOVA_VENV:-$PWD/.venv}/bin/python"  # absolute: pytest runs from /tmp
"$py" -m pip install -q --disable-pip-version-check "nanobind>=3.0.1,<4" scikit-build-core
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
# Run from outside the checkout so that `import nova` finds the installed package, not python/nova.
repo=$PWD
cd /tmp
"$py" -m pytest -q -p no:cacheprovider "$repo/python/tests"
