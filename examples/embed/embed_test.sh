#!/usr/bin/env bash
# The embedding example on the MLP: parameters saved by the scopeflow
# command, then several threads on one Predictor agreeing.
set -euo pipefail
mlp=examples/mlp
params="$TEST_TMPDIR/mlp.params"
tools/scopeflow run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --save_params="$params" >/dev/null
out=$(examples/embed/embed "$mlp/main.pbtxt" "$params" "$mlp/digit.npy")
echo "$out"
grep -q '^input  image: float32 \[-1, 64\]$' <<<"$out" || { echo "FAIL: input"; exit 1; }
grep -q '^output probabilities: float32 \[-1, 10\]$' <<<"$out" || { echo "FAIL: output"; exit 1; }
grep -q '^class [0-9] (score 0\.[0-9]*)$' <<<"$out" || { echo "FAIL: class"; exit 1; }
grep -q '^4 threads x 2000 runs: 0 differed from the first' <<<"$out" || { echo "FAIL: threads"; exit 1; }
