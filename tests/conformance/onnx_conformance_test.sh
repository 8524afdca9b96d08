#!/usr/bin/env bash
# Runs the ONNX conformance runner over the shared ONNX node test cases,
# ../shared/conformance/onnx-node relative to the repository root, once as
# the models are (graph inputs fed at run time) and once with the inputs
# that scopeflow needs as constants frozen (--freeze_constant_inputs),
# failing if any supported case fails. Then every case of the full suite,
# unpacked from ../shared/conformance/onnx-node-v1.22-all-public.tar.xz, in
# both modes, failing if any case's outcome differs from
# onnx_node_v1.22_expected.tsv (a regression or an unexpected pass alike;
# regenerate the file with tools/update_conformance_expected.sh), and checks
# that docs/CONFORMANCE.md lists what that file says. A clone without the
# shared cases skips, saying why.
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
# SCOPEFLOW_SHARED names another shared folder (a worktree elsewhere).
shared="${SCOPEFLOW_SHARED:-$root/../shared}"
cases="$shared/conformance/onnx-node"
full_suite="$shared/conformance/onnx-node-v1.22-all-public.tar.xz"
expected="$root/tests/conformance/onnx_node_v1.22_expected.tsv"
doc="$root/docs/CONFORMANCE.md"

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

# docs/CONFORMANCE.md's generated part is what the expectations say.
generated_doc="$(mktemp)"
trap 'rm -f "$generated_doc"' EXIT
"$runner" --expected_markdown="$expected" >"$generated_doc"
if ! diff -u "$generated_doc" \
  <(sed -n '/^<!-- BEGIN full-suite outcomes/,/^<!-- END full-suite outcomes/p' \
    "$doc" | sed '1d;$d') >/dev/null; then
  echo "FAIL: docs/CONFORMANCE.md does not list what $expected says;" \
    "regenerate both with tools/update_conformance_expected.sh"
  status=1
fi

if [[ ! -f "$full_suite" ]]; then
  echo "SKIP: no full ONNX suite at $full_suite; its expected outcomes" \
    "($expected) are not checked"
  exit "$status"
fi
if ! command -v xz >/dev/null; then
  echo "SKIP: no xz to unpack $full_suite; its expected outcomes" \
    "($expected) are not checked"
  exit "$status"
fi
unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked" "$generated_doc"' EXIT
tar -xJf "$full_suite" -C "$unpacked"
echo
echo "=== ONNX conformance, the whole full suite in both modes against" \
  "$expected"
"$runner" --expected="$expected" "$unpacked/node" || status=1
exit "$status"
