#!/usr/bin/env bash
# Sets everything up and runs the main job on the CPU: the built-in example
# net examples/mlp (startup net, then the main net on one 8x8 digit image,
# timed over 100 runs with a profile per op type).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //tools:scopeflow
bazel-bin/tools/scopeflow run examples/mlp/main.pbtxt \
  --startup=examples/mlp/startup.pbtxt \
  --feed=image=examples/mlp/digit.npy \
  --repeat=100 --profile
