#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [release|sanitize]
#   release  -> build/       (the CLI lands at build/nova)
#   sanitize -> build-asan/  (AddressSanitizer + UndefinedBehaviorSanitizer)
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
export CCACHE_BASEDIR="$PWD"  # relative paths in ccache's hashes: build trees share cached objects
jobs=$(nproc 2>/dev/null || echo 2)
case "$kind" in
  release)  dir=build;      flags=(-DCMAKE_BUILD_TYPE=Release) ;;
  # -O1: the usual optimization for sanitizer builds; it halves their compile time against -O2.
  sanitize) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                                   -DNOVA_SANITIZE=ON -DNOVA_BUILD_BENCH=OFF) ;;
  *) echo "usage: scripts/build.sh [release|sanitize]" >&2; exit 2 ;;
esac
# -UNOVA_PARTS: a tree once configured for a subset of the library (a developer's narrow build) is
# built whole again here.
cmake -S . -B "$dir" -G Ninja -UNOVA_PARTS "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
