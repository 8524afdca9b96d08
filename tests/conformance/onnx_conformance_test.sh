#!/usr/bin/env bash
# Runs the ONNX conformance runner over the shared ONNX node test cases,
# ../shared/conformance/onnx-node relative to the repository root, once as
# the models are (graph inputs fed at run time) and once with the inputs
# that scopeflow needs as constants frozen (--freeze_constant_inputs); then
# the same over the cases of the full suite that full_suite_cases.txt lists,
# unpacked from ../shared/conformance/onnx-node-v1.22-all-public.tar.xz.
# Fails if any supported case fails. A clone without the shared cases
# skips, saying why.
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
full_suite="$root/../shared/conformance/onnx-node-v1.22-all-public.tar.xz"
full_suite_list="$root/tests/conformance/full_suite_cases.txt"

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

if [[ ! -f "$full_suite" ]]; then
  echo "SKIP: no full ONNX suite at $full_suite; the cases of" \
    "$full_suite_list are not run"
  exit "$status"
fi
if ! command -v xz >/dev/null; then
  echo "SKIP: no xz to unpack $full_suite; the cases of $full_suite_list" \
    "are not run"
  exit "$status"
fi
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
mapfile -t members < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' \
  -e 's/^[[:space:]]*/node\//' -e 's/[[:space:]]*$//' "$full_suite_list")
tar -xJf "$full_suite" -C "$unpacked" "${members[@]}"
echo
echo "=== ONNX conformance, ${#members[@]} cases of the full suite" \
  "($full_suite_list), graph inputs fed at run time"
"$runner" "$unpacked/node" || status=1
echo
echo "=== ONNX conformance, the same, inputs needed as constants frozen"
"$runner" --freeze_constant_inputs "$unpacked/node" || status=1
exit "$status"
