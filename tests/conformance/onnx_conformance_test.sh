#!/usr/bin/env bash
# Runs the ONNX conformance runner over the shared ONNX node test cases,
# ../shared/conformance/onnx-node relative to the repository root, once as
# the models are (graph inputs fed at run time) and once with the inputs
# that scopeflow needs as constants frozen (--freeze_constant_inputs). Fails
# if any supported case fails. A clone without the shared cases skips,
# saying why.
#
#   bazel test //tests/conformance:onnx_conformance_test
#   tests/conformance/onnx_conformance_test.sh [RUNNER]
#
# Without RUNNER (outside bazel), the runner is built with bazel first.
set -euo pipefail

# The repository root: this script's real location is
# tests/conformance/ in it (under bazel the script is a symlink into the
# source tree).
script="$(readlink -f "${BASH_SOURCE[0]}")"
root="$(cd "$(dirname "$script")/../.." && pwd)"
cases="$root/../shared/conformance/onnx-node"

if [[ ! -d "$cases" ]]; then
  echo "SKIP: no ONNX conformance cases at $cases (this clone has no" \
    "../shared/conformance); nothing to run"
  exit 0
fi

runner="${1:-}"
if [[ -z "$runner" ]]; then
  (cd "$root" && bazel build //tools:onnx_conformance)
  runner="$root/bazel-bin/tools/onnx_conformance"
fi

status=0
echo "=== ONNX conformance, graph inputs fed at run time: $cases"
"$runner" "$cases" || status=1
echo
echo "=== ONNX conformance, inputs needed as constants frozen: $cases"
"$runner" --freeze_constant_inputs "$cases" || status=1
exit "$status"
