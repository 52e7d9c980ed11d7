#!/usr/bin/env bash
# Line coverage of the library and the CLI by the C++ test suite: a gcov tree at -O0 (build-cov/,
# about 15 min to build and 9 min to test on 2 cores), then a per-file table in which a line counts as
# covered when any template instantiation of it ran. Lines of kernels for ISAs this CPU lacks (AVX-512,
# AMX, ...) show as uncovered: run it on a machine that has them for those.
#   tools/coverage.sh [build-dir]      -> build-cov/coverage.json and the table on stdout
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-cov}
jobs=$(nproc 2>/dev/null || echo 2)
py=.venv/bin/python
[ -x "$py" ] || scripts/install-python-deps.sh
"$py" -m pip install -q --disable-pip-version-check gcovr
CCACHE_DISABLE=1 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS=--coverage -O0 -g0" \
  -DNOVA_BUILD_BENCH=OFF -DNOVA_UNITY_BUILD=OFF >/dev/null
CCACHE_DISABLE=1 cmake --build "$dir" -j "$jobs"
find "$dir" -name '*.gcda' -delete  # counts of earlier runs
ctest --test-dir "$dir" -j "$jobs" --timeout 1800 --output-on-failure >"$dir/ctest.log" || {
  echo "coverage.sh: some tests failed (see $dir/ctest.log); the counts below are of the tests that ran" >&2
}
# Left out: CMake's compiler-identification objects (built with the flags, no source here) and the
# tile-transform generator, which runs at build time (its output is what the transform tests check).
"$py" -m gcovr -r . --object-directory "$dir" -f 'src/' -f 'cli/' -f 'include/' -e 'src/conv/codegen/' \
  --gcov-exclude-directories '.*/CMakeFiles/[0-9][^/]*/.*' --gcov-ignore-parse-errors=all \
  -j "$jobs" --json -o "$dir/coverage.json" 2> >(grep -v WARNING >&2)
"$py" tools/coverage_summary.py "$dir/coverage.json"
