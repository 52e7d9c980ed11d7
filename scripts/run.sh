#!/usr/bin/env bash
# Set-up and nova's main job on built-in defaults: installs what is needed, builds, runs `nova report`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
exec build/nova report "$@"
