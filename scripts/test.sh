#!/usr/bin/env bash
# Set-up and every test: installs what is needed, builds a release tree and an ASan+UBSan tree, and
# runs the whole suite in both; then the thread pool under ThreadSanitizer and the Python tests. CI runs
# exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== release build and tests"
scripts/build.sh release
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
scripts/build.sh sanitize
# Two catalogue checks run in the release tree only: they replay the stored catalogue's error
# measurements (62 CPU s of the sanitizer run, whose tests took 102 s on 2 cores) through harness code
# that the other sanitizer tests cover on smaller data.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$jobs" --timeout 900 \
  -E '^Catalogue\.(NoWorseThanThePublishedPointSetsOnTheSameModelAndData|StoredHeldOutErrorsAreReproduced)$'

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
  scripts/python-tests.sh
fi
echo "== all tests passed in $(( $(date +%s) - start )) s"
