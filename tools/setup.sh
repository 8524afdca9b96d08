#!/usr/bin/env bash
# Installs every Debian package scopeflow needs to build, test and benchmark.
# Idempotent: packages already present are skipped, so calling it before every
# command costs a second.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-java bazel-platforms
  g++ pkg-config
  libprotobuf-dev protobuf-compiler
  libabsl-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libdnnl-dev
  zlib1g-dev
  clang-format
  python3-sklearn
  libcpp-httplib-dev nlohmann-json3-dev
  libgrpc++-dev protobuf-compiler-grpc python3-grpcio
  libssl-dev
  wrk
  python3-torch python3-torchvision python3-onnx
  libopenmpi-dev openmpi-bin
  cmake
  python3-dev python3-pybind11 python3-pytest
  python3-numpy binutils
  python3-requests
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Bazel 4 never evicts from its disk cache; cap it so that it cannot fill the disk.
bash "$(dirname "$0")/trim_disk_cache.sh"
