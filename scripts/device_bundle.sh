#!/usr/bin/env bash
# Packs what a run on a lent device machine needs into .dev/bundle.tar.xz (ignored by git): the CLI
# (and build/nova_old or other build/nova_* binaries kept for an A/B), the oneDNN peer, every test
# program, nova_bench_gemm, and the shared libraries they link beyond the C and C++ runtimes (GMP,
# fmt, oneDNN, libgomp, Google Benchmark: the device has none of them). A run script then sources
# bench/results/2026-11-26-session16-amx/device_setup.sh, which unpacks the bundle into build/.
# Session 18's first device run found libgmpxx missing from a bundle made by hand; this takes every
# library ldd names.
#
#   scripts/device_bundle.sh [build-dir]      (then: run with carry [".dev"])
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -x "$build/nova" ] || { echo "device_bundle: $build/nova is not built" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/tests" "$stage/bench" .dev
for f in "$build"/nova "$build"/nova_* ; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$stage/"
done
for f in "$build"/tests/nova_tests_*; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$stage/tests/"
done
[ -x "$build/bench/nova_bench_gemm" ] && cp "$build/bench/nova_bench_gemm" "$stage/bench/"
find "$stage" -type f -perm -u+x -print0 | xargs -0 -n1 ldd 2>/dev/null | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libpthread|libdl|librt)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
tar -cJf .dev/bundle.tar.xz -C "$stage" .
echo "device_bundle: .dev/bundle.tar.xz ($(du -h .dev/bundle.tar.xz | cut -f1)):"
tar -tJf .dev/bundle.tar.xz | grep -v '/$' | sed 's/^/  /'
