#!/usr/bin/env bash
# Sets everything up and trains an example net on the CPU:
#   tools/train_example.sh [mlp|cnn|rnn] [more scopeflow train flags]
# e.g. tools/train_example.sh cnn --checkpoint_dir=/tmp/digits --resume
# mlp and cnn learn the 8x8 digits (flags in examples/digits/NAME.flags);
# rnn counts the ones in sequences of bits with the recurrent op
# (examples/sequence/rnn.flags, data from examples/sequence/gen_bits.py).
set -euo pipefail
cd "$(dirname "$0")/.."
example="${1:-mlp}"
shift || true
data=()
if [[ "$example" == rnn ]]; then
  flags="examples/sequence/rnn.flags"
else
  flags="examples/digits/${example}.flags"
fi
if [[ ! -f "$flags" ]]; then
  echo "train_example: no $flags (examples: mlp, cnn, rnn)" >&2
  exit 2
fi
bash tools/setup.sh
if [[ "$example" == rnn ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 examples/sequence/gen_bits.py "$work/bits.csv"
  data=(--data="$work/bits.csv")
fi
bazel build //tools:scopeflow
bazel-bin/tools/scopeflow train --flagfile="$flags" "${data[@]}" "$@"
