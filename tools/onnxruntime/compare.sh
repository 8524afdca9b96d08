#!/usr/bin/env bash
# Compares scopeflow with ONNX Runtime 1.30 on the nets of net_benchmark
# (the chain of adds, the MLP, the CNN), on this machine and in one run
# (compare.py says how). ONNX Runtime is not in Debian's archive: its own
# CPU library comes with its Node.js package, from the npm registry, kept
# under ~/.cache/scopeflow-onnxruntime; the models are written with
# Debian's onnx Python package.
#   bash tools/onnxruntime/compare.sh [ROUNDS]
# Given ONNX models instead, compares the two on those (compare_models.py
# says how; its flags pass through), e.g. the zoo's (docs/MODELS.md):
#   bash tools/onnxruntime/compare.sh [--rounds N] [--threads 1,2] \
#     ~/.cache/scopeflow-zoo/resnet18/opset17.onnx \
#     ~/.cache/scopeflow-zoo/transformer_encoder/opset17.onnx:batch=8
# SCOPEFLOW_BAZEL_FLAGS adds flags to the build (e.g. --config=cpu_only).
set -euo pipefail
called_from=$PWD
cd "$(dirname "$0")/../.."
version=1.30.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/scopeflow-onnxruntime
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
missing=()
/usr/bin/python3 -c 'import onnx' 2>/dev/null || missing+=(python3-onnx)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[[ -x /usr/bin/time ]] || missing+=(time)
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
if (($# > 0)) && [[ ! $1 =~ ^[0-9]+$ ]]; then
  # shellcheck disable=SC2086  # The flags are words.
  bazel build ${SCOPEFLOW_BAZEL_FLAGS:-} //tools:scopeflow
  exec /usr/bin/python3 tools/onnxruntime/compare_models.py \
    --scopeflow bazel-bin/tools/scopeflow \
    --node-path "$cache/node_modules" --base-dir "$called_from" "$@"
fi
models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
/usr/bin/python3 tools/onnxruntime/make_models.py "$models"
bazel build //tests/benchmarks:net_benchmark
cp bazel-bin/tests/benchmarks/net_benchmark "$models/"
/usr/bin/python3 tools/onnxruntime/compare.py "$models/net_benchmark" \
  "$models" "$cache/node_modules" "${1:-5}"
