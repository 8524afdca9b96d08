#!/usr/bin/env bash
# Compares scopeflow with ONNX Runtime 1.30 on the nets of net_benchmark
# (the chain of adds, the MLP, the CNN), on this machine and in one run
# (compare.py says how). ONNX Runtime is not in Debian's archive: its own
# CPU library comes with its Node.js package, from the npm registry, kept
# under ~/.cache/scopeflow-onnxruntime; the models are written with
# Debian's onnx Python package.
#   bash tools/onnxruntime/compare.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
version=1.30.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/scopeflow-onnxruntime
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
missing=()
/usr/bin/python3 -c 'import onnx' 2>/dev/null || missing+=(python3-onnx)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi
if [[ ! -f "$cache/node_modules/onnxruntime-node/package.json" ]] ||
  ! grep -q "\"version\": \"$version\"" \
    "$cache/node_modules/onnxruntime-node/package.json"; then
  mkdir -p "$cache"
  # Its install script only fetches GPU libraries; the CPU one is packed.
  npm install --prefix "$cache" --ignore-scripts --no-audit --no-fund \
    "onnxruntime-node@$version"
fi
models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
/usr/bin/python3 tools/onnxruntime/make_models.py "$models"
bazel build //tests/benchmarks:net_benchmark
cp bazel-bin/tests/benchmarks/net_benchmark "$models/"
/usr/bin/python3 tools/onnxruntime/compare.py "$models/net_benchmark" \
  "$models" "$cache/node_modules" "${1:-5}"
