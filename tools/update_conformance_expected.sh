#!/usr/bin/env bash
# Regenerates the expected outcome of every case of the full ONNX node suite
# (tests/conformance/onnx_node_v1.22_expected.tsv, which
# //tests/conformance:onnx_conformance_test holds the runner to) from a run
# of the runner over ../shared/conformance/onnx-node-v1.22-all-public.tar.xz,
# and the part of docs/CONFORMANCE.md that lists them. Run it from anywhere
# in the repository after a change that changes outcomes, and review the
# diff:
#
#   tools/update_conformance_expected.sh [RUNNER]
#
# Without RUNNER, the runner is built with bazel first (--config=cpu_only:
# the runner runs the CPU kernels only).
set -euo pipefail

script="$(readlink -f "${BASH_SOURCE[0]}")"
root="$(cd "$(dirname "$script")/.." && pwd)"
# SCOPEFLOW_SHARED names another shared folder (a worktree elsewhere).
full_suite="${SCOPEFLOW_SHARED:-$root/../shared}/conformance/onnx-node-v1.22-all-public.tar.xz"
expected="$root/tests/conformance/onnx_node_v1.22_expected.tsv"
doc="$root/docs/CONFORMANCE.md"

if [[ ! -f "$full_suite" ]]; then
  echo "no full ONNX suite at $full_suite: nothing to regenerate from" >&2
  exit 1
fi
runner="${1:-}"
if [[ -z "$runner" ]]; then
  (cd "$root" && bazel build --config=cpu_only //tools:onnx_conformance)
  runner="$root/bazel-bin/tools/onnx_conformance"
fi

unpacked="$(mktemp -d)"
trap 'rm -rf "$unpacked"' EXIT
tar -xJf "$full_suite" -C "$unpacked"
"$runner" --write_expected="$expected" \
  --suite_name="../shared/conformance/$(basename "$full_suite")" \
  "$unpacked/node" | tail -n 1

# Replace the lines between the markers of docs/CONFORMANCE.md.
"$runner" --expected_markdown="$expected" >"$unpacked/generated.md"
awk -v generated="$unpacked/generated.md" '
  /^<!-- END full-suite outcomes/ { skipping = 0 }
  !skipping { print }
  /^<!-- BEGIN full-suite outcomes/ {
    while ((getline line < generated) > 0) print line
    skipping = 1
  }' "$doc" >"$unpacked/CONFORMANCE.md"
if ! grep -q '^<!-- BEGIN full-suite outcomes' "$doc"; then
  echo "$doc has no '<!-- BEGIN full-suite outcomes' marker line" >&2
  exit 1
fi
cat "$unpacked/CONFORMANCE.md" >"$doc"
echo "regenerated $expected and the full-suite outcomes of $doc"
