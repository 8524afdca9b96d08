#!/usr/bin/env bash
# Runs the ONNX conformance runner over the shared ONNX node test cases,
# ../shared/conformance/onnx-node relative to the repository root, once as
# the models are (graph inputs fed at run time) and once with the inputs
# that scopeflow needs as constants frozen (--freeze_constant_inputs). Then
# the same for the cases of the full suite that full_suite_cases.txt names,
# unpacked from ../shared/conformance/onnx-node-v1.22-all-public.tar.xz.
# Fails if any supported case fails. A clone without the shared cases skips,
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
run_both() {
  echo "=== ONNX conformance, graph inputs fed at run time: $1"
  "$runner" "$1" || status=1
  echo
  echo "=== ONNX conformance, inputs needed as constants frozen: $1"
  "$runner" --freeze_constant_inputs "$1" || status=1
}
run_both "$cases"

archive="$root/../shared/conformance/onnx-node-v1.22-all-public.tar.xz"
list="$(dirname "$script")/full_suite_cases.txt"
if [[ ! -f "$archive" ]]; then
  echo "SKIP: no full ONNX suite at $archive; its listed cases not run"
  exit "$status"
fi
unpacked="$(mktemp -d "${TEST_TMPDIR:-/tmp}/onnx-full.XXXXXX")"
trap 'rm -rf "$unpacked"' EXIT
mapfile -t names < <(grep -v '^#' "$list" | grep -v '^[[:space:]]*$' |
  sed 's|^|node/|')
tar -xJf "$archive" -C "$unpacked" "${names[@]}"
echo
run_both "$unpacked/node"
exit "$status"
