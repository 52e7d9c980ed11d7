#!/usr/bin/env bash
# Regenerates data/catalogue.json (deterministic: seed 0, one thread) and prints the error tables.
# Usage: tools/regenerate_catalogue.sh [BUILD_DIR]   (default: build)
# Takes about 10-15 minutes on one core of the development machine (see docs/catalogue.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
nova="$build/nova"
[[ -x "$nova" ]] || { echo "regenerate_catalogue: no nova binary at $nova (build first)" >&2; exit 2; }
tmp="$(mktemp "$root/data/catalogue.json.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
"$nova" catalogue generate --seed 0 --output "$tmp"
mv "$tmp" "$root/data/catalogue.json"
trap - EXIT
# The engine's default transforms are the catalogue's fp32 entries (rebuild afterwards).
"$nova" catalogue engine-defaults --catalogue "$root/data/catalogue.json" -o "$root/src/conv/default_points_table.hpp"
"$nova" catalogue report --catalogue "$root/data/catalogue.json"
