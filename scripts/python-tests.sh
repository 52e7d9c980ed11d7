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
# The build requirements (nanobind, scikit-build-core) as pyproject.toml pins them, for the build below
# without isolation.
mapfile -t build_requires < <("$py" -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")')
"$py" -m pip install -q --disable-pip-version-check "${build_requires[@]}"
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
# Run from outside the checkout so that `import nova` finds the installed package, not python/nova.
repo=$PWD
cd /tmp
"$py" -m pytest -q -p no:cacheprovider "$repo/python/tests"
