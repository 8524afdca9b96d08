#!/usr/bin/env bash
# `scopeflow info` reads the example nets and reports bad files clearly.
set -euo pipefail
scopeflow=tools/scopeflow

out=$("$scopeflow" info examples/mlp/main.pbtxt)
grep -q 'net "mlp" (format version 1): 1 block(s)' <<<"$out"
grep -q 'var fc1.w .*float32 *\[64, 32\] *persistable' <<<"$out"
grep -q 'op 3 softmax(X=\[logits\]) -> (Out=\[probabilities\])' <<<"$out"
"$scopeflow" info examples/mlp/startup.pbtxt | grep -q 'op 0 gaussian_random'

bad="$TEST_TMPDIR/bad.pbtxt"
echo 'format_version: 3' >"$bad"
if err=$("$scopeflow" info "$bad" 2>&1); then
  echo "expected a failure for a bad version"; exit 1
fi
grep -q "has format_version 3; this build reads version 1" <<<"$err"

if "$scopeflow" 2>/dev/null; then echo "expected usage error"; exit 1; fi
echo "scopeflow info: all checks passed"
