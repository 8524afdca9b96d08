#!/usr/bin/env bash
# Sets everything up and trains an example net on the 8x8 digits on the CPU:
#   tools/train_example.sh [mlp|cnn] [more scopeflow train flags]
# e.g. tools/train_example.sh cnn --checkpoint_dir=/tmp/digits --resume
# The flags of each example are in examples/digits/NAME.flags.
set -euo pipefail
cd "$(dirname "$0")/.."
example="${1:-mlp}"
shift || true
flags="examples/digits/${example}.flags"
if [[ ! -f "$flags" ]]; then
  echo "train_example: no $flags (examples: mlp, cnn)" >&2
  exit 2
fi
bash tools/setup.sh
bazel build //tools:scopeflow
bazel-bin/tools/scopeflow train --flagfile="$flags" "$@"
