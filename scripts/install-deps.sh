#!/usr/bin/env bash
# Installs the Debian 12 packages nova builds with. Idempotent and quick when all are present.
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config ccache
  libgmp-dev libeigen3-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev            # oneDNN: a peer in the convolution benchmark
  ocl-icd-opencl-dev     # oneDNN's CMake config looks for OpenCL (only recommended by libdnnl-dev)
  python3-dev python3-venv
  # The sanitizer tree (scripts/build.sh sanitize) is compiled by clang: its runtimes (ASan, UBSan) and
  # OpenMP's (the OpenMP tests link the compiler's runtime)
  clang libclang-rt-14-dev libomp-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
