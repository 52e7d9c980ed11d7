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
  # clang, while the release tree is g++'s: from an empty cache it compiled this tree in 417 s against
  # g++'s 555 s (2 vCPUs; bench/results/2026-11-29-session44-avx2/), and the test command checks
  # nova's code against both compilers' warnings and both sanitizer runtimes (and both OpenMP runtimes).
  sanitize) dir=build-asan
            cxx=$(command -v "${NOVA_SANITIZE_CXX:-clang++}") || {
              echo "build.sh: ${NOVA_SANITIZE_CXX:-clang++} not found (scripts/install-deps.sh installs clang)" >&2
              exit 1
            }
            flags=(-DCMAKE_CXX_COMPILER="$cxx"
                   -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                   -DNOVA_SANITIZE=ON -DNOVA_BUILD_BENCH=OFF) ;;
  *) echo "usage: scripts/build.sh [release|sanitize]" >&2; exit 2 ;;
esac
# A tree configured before with another compiler (build-asan was g++'s until session 44) is configured
# afresh: CMake cannot switch a tree's compiler in place.
if [ -n "${cxx:-}" ] && [ -f "$dir/CMakeCache.txt" ]; then
  have=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
  [ "$(readlink -f "$have")" = "$(readlink -f "$cxx")" ] || rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
fi
# -UNOVA_PARTS: a tree once configured for a subset of the library (a developer's narrow build) is
# built whole again here.
cmake -S . -B "$dir" -G Ninja -UNOVA_PARTS "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$jobs"
