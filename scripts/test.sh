#!/usr/bin/env bash
# Set-up and every test: installs what is needed, builds a release tree and an ASan+UBSan tree, and
# runs the whole suite in both; then the thread pool under ThreadSanitizer and the Python tests. CI runs
# exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

# The Python side's venv (PyTorch: 2.5 GB to fetch and unpack, mostly one core and the disk, 100 s here)
# is made in the background while the C++ trees build; the Python stage waits for it. After the apt-get
# of install-deps.sh, so that the two never hold dpkg's lock at once.
py_deps_log=$(mktemp)
py_deps_pid=""
if [ -x scripts/install-python-deps.sh ]; then
  scripts/install-python-deps.sh >"$py_deps_log" 2>&1 &
  py_deps_pid=$!
fi
trap '[ -n "$py_deps_pid" ] && kill "$py_deps_pid" 2>/dev/null; rm -f "$py_deps_log"' EXIT

echo "== release build and tests"
scripts/build.sh release
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
scripts/build.sh sanitize
# Four catalogue checks run in the release tree only: two replay the stored catalogue's error
# measurements (62 CPU s of the sanitizer run, whose tests took 102 s on 2 cores), two run a whole
# search through the CLI (catalogue generate on two entries, catalogue search: 22 and 28 s under the
# sanitizers), all through harness and discovery code that the other sanitizer tests cover on smaller data.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 \
  -E '^(Catalogue\.(NoWorseThanThePublishedPointSetsOnTheSameModelAndData|StoredHeldOutErrorsAreReproduced)|CatalogueCli\.GenerateReproducesTheShippedEntries|CatalogueSearchCli\.StageProxySearchGivesAnExactTransformWhoseProxyPredictsItsError)$'

echo "== ThreadSanitizer build and tests of the thread pool"
export CCACHE_BASEDIR="$PWD"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S tests/tsan -B build-tsan -G Ninja "${launcher[@]}" >/dev/null
cmake --build build-tsan -j "$jobs"
# die_after_fork=0: one test forks on purpose (the child's jobs must not wait for workers it lacks).
TSAN_OPTIONS=halt_on_error=1:die_after_fork=0 ctest --test-dir build-tsan --output-on-failure --timeout 300

if [ -x scripts/python-tests.sh ]; then
  echo "== Python package and validation tests"
  if [ -n "$py_deps_pid" ]; then
    py_deps_status=0
    wait "$py_deps_pid" || py_deps_status=$?
    py_deps_pid=""
    cat "$py_deps_log"
    [ "$py_deps_status" -eq 0 ] || { echo "install-python-deps failed (exit $py_deps_status)" >&2; exit 1; }
  fi
  scripts/python-tests.sh  # its own install-python-deps.sh call finds the venv ready
fi
echo "== all tests passed in $(( $(date +%s) - start )) s"
