#!/usr/bin/env bash
# docs/OPS.md must be what `scopeflow ops --markdown` prints (the same in
# every build: it lists the CPU kernels only). Regenerate it with
#   bazel build //tools:scopeflow && bazel-bin/tools/scopeflow ops --markdown >docs/OPS.md
set -euo pipefail
scopeflow=tools/scopeflow
doc=docs/OPS.md
generated="$TEST_TMPDIR/OPS.md"
"$scopeflow" ops --markdown >"$generated"
if ! diff -u "$doc" "$generated" >"$TEST_TMPDIR/ops.diff"; then
  echo "FAIL: docs/OPS.md differs from scopeflow ops --markdown; regenerate it:"
  echo "  bazel build //tools:scopeflow && bazel-bin/tools/scopeflow ops --markdown >docs/OPS.md"
  head -40 "$TEST_TMPDIR/ops.diff"
  exit 1
fi
echo "docs/OPS.md matches scopeflow ops --markdown ($(grep -c '^## ' "$doc") ops)"
