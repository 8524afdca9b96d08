#!/usr/bin/env bash
# Sets everything up and runs the main job on the CPU: the built-in example
# net examples/mlp.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //tools:scopeflow
bazel-bin/tools/scopeflow info examples/mlp/main.pbtxt
