#!/usr/bin/env bash
# Installs the Python module: python/install_python.sh PREFIX [BAZEL_FLAGS...]
# builds //python:scopeflow_package with the given flags (e.g.
# --config=cpu_only) and copies it to PREFIX/lib/python3/dist-packages/
# scopeflow (Debian's python3 searches /usr/lib/python3/dist-packages and
# /usr/local/lib/python3/dist-packages; for another prefix, put that
# directory on PYTHONPATH). The module needs the shared libraries
# tools/setup.sh installs (Abseil, protobuf, oneDNN) at run time.
set -euo pipefail
if (($# < 1)); then
  echo "usage: $0 PREFIX [BAZEL_FLAGS...]" >&2
  exit 2
fi
prefix="$1"
shift
cd "$(dirname "$0")/.."
bazel build "$@" //python:scopeflow_package
bin=$(bazel info "$@" bazel-bin)
dest="$prefix/lib/python3/dist-packages/scopeflow"
mkdir -p "$dest"
install -m 644 python/scopeflow/*.py "$dest/"
install -m 755 "$bin/python/scopeflow/_scopeflow.so" "$dest/"
echo "installed the scopeflow module in $dest"
