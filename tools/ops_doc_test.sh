#!/usr/bin/env bash
# docs/OPS.md must be what `scopeflow ops --markdown` prints. Regenerate it
# from a build with GPU code (so that the CUDA kernels are listed):
#   bazel build //tools:scopeflow && bazel-bin/tools/scopeflow ops --markdown >docs/OPS.md
# A build without GPU code compares every line but the CUDA kernels'.
set -euo pipefail
scopeflow=tools/scopeflow
doc=docs/OPS.md
generated="$TEST_TMPDIR/OPS.md"
"$scopeflow" ops --markdown >"$generated"
filter() { cat; }
if "$scopeflow" --version | grep -q 'CPU only'; then
  filter() { grep -v '^- CUDA: '; }
fi
if ! diff -u <(filter <"$doc") <(filter <"$generated") >"$TEST_TMPDIR/ops.diff"; then
  echo "FAIL: docs/OPS.md differs from scopeflow ops --markdown; regenerate it:"
  echo "  bazel build //tools:scopeflow && bazel-bin/tools/scopeflow ops --markdown >docs/OPS.md"
  head -40 "$TEST_TMPDIR/ops.diff"
  exit 1
fi
echo "docs/OPS.md matches scopeflow ops --markdown ($(grep -c '^## ' "$doc") ops)"
