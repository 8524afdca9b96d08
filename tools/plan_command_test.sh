#!/usr/bin/env bash
# scopeflow plan on the example MLP at batch 8. By hand, as prepared (the
# relu fused into the first fc): image 2048 bytes, fc1.w 8192, fc1.b 128,
# hidden.relu 1024, fc2.w 1280, fc2.b 40, logits 320, probabilities 320.
# Op 0 (fc) needs 2048 + 8192 + 128 + 1024 = 11392 bytes, the most of any.
set -euo pipefail
scopeflow=tools/scopeflow
mlp=examples/mlp/main.pbtxt
fail() { echo "FAIL: $*"; exit 1; }

# No budget: everything moves in once. Op 0's variables and op 1's
# weights, prefetched during op 0, make the peak: 11392 + 1320 = 12712.
# In: image, the four weights (11688 bytes); out: probabilities (320).
out=$("$scopeflow" plan "$mlp" --batch=8)
grep -q 'peak bytes: 12712$' <<<"$out" || fail "peak without budget: $out"
grep -q 'moved bytes: 12008$' <<<"$out" || fail "moved without budget: $out"
grep -q 'transfers: 6$' <<<"$out" || fail "transfers without budget: $out"
grep -q 'resident at the peak, during op 0 (fc): 6 variable(s)' <<<"$out" ||
  fail "resident at peak: $out"
grep -qE '^  fc1\.w +8192  float32 \[64, 32\]' <<<"$out" ||
  fail "largest resident first: $out"
# The arena: hidden.relu [0, 1] and logits [1, 2] overlap, so 1024 + 320
# (both multiples of 64); probabilities is fetched and image fed.
grep -q 'arena: 2 temporaries planned, 2 allocated on their own; arena bytes: 1344, live peak bytes: 1344, sum of their sizes: 1344' <<<"$out" ||
  fail "arena: $out"

# Budgeted to op 0's need: nothing prefetched during op 0, nothing evicted
# after (image and then hidden.relu die in time).
out=$("$scopeflow" plan "$mlp" --batch=8 --device_memory_budget=11392)
grep -q 'device memory budget: 11392 bytes, offload policy: planned' <<<"$out" ||
  fail "budget header: $out"
grep -q 'peak bytes: 11392$' <<<"$out" || fail "budgeted peak: $out"
grep -q 'moved bytes: 12008$' <<<"$out" || fail "budgeted moved: $out"
grep -q 'transfers: 6$' <<<"$out" || fail "budgeted transfers: $out"

# On demand: every variable in before its op and out after it, but the dead.
out=$("$scopeflow" plan "$mlp" --batch=8 --device_memory_budget=11392 \
  --offload_policy=on_demand)
grep -q 'peak bytes: 11392$' <<<"$out" || fail "on_demand peak: $out"
grep -q 'transfers: 14$' <<<"$out" || fail "on_demand transfers: $out"
# In: 10368 + 2344 + 320; out: 9344 + 1640 + 320.
grep -q 'moved bytes: 24336$' <<<"$out" || fail "on_demand moved: $out"

# Errors: a budget below op 0's need, an unknown batch, a bad policy.
if out=$("$scopeflow" plan "$mlp" --batch=8 --device_memory_budget=11391 2>&1); then
  fail "a budget too small was accepted: $out"
fi
grep -q 'op 0 (fc) needs 11392 bytes of device memory' <<<"$out" ||
  fail "too small: $out"
grep -q 'more than the budget of 11391 bytes' <<<"$out" || fail "too small: $out"
if out=$("$scopeflow" plan "$mlp" 2>&1); then fail "no batch: $out"; fi
grep -q 'variable "image" is float32 \[-1, 64\]' <<<"$out" || fail "no batch: $out"
if out=$("$scopeflow" plan "$mlp" --batch=8 --offload_policy=lazy 2>&1); then
  fail "bad policy: $out"
fi
grep -q 'offload policy "lazy"' <<<"$out" || fail "bad policy: $out"

# A net whose sizes depend on values: non_zero's output, and its cast. The
# plan reports the rest and names those; a budget cannot be planned.
values="${TEST_TMPDIR:-$(mktemp -d)}/values.pbtxt"
cat >"$values" <<'NET'
format_version: 1 name: "values"
blocks {
  vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ -1, 256 ] }
  ops { type: "scale" inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "a" } attrs { name: "scale" f: 2 } }
  ops { type: "non_zero" inputs { slot: "X" vars: "a" }
        outputs { slot: "Out" vars: "i" } }
  ops { type: "cast" inputs { slot: "X" vars: "i" }
        outputs { slot: "Out" vars: "f" } attrs { name: "out_dtype" i: 1 } }
  ops { type: "relu" inputs { slot: "X" vars: "a" }
        outputs { slot: "Out" vars: "b" } }
}
NET
out=$("$scopeflow" plan "$values" --batch=4) || fail "values: $out"
grep -q 'arena: 1 temporaries planned' <<<"$out" || fail "values arena: $out"
# x, a and b of 4096 bytes: in, a written, b out.
grep -q 'moved bytes: 8192$' <<<"$out" || fail "values moved: $out"
grep -q 'unsized: 2 variable(s) whose size depends on values' <<<"$out" ||
  fail "values unsized: $out"
grep -qE '^  i +int64 \[2, -1\], written by op 1 \(non_zero\)$' <<<"$out" ||
  fail "values i: $out"
grep -qE '^  f +float32 \[2, -1\], written by op 2 \(cast\)$' <<<"$out" ||
  fail "values f: $out"
if out=$("$scopeflow" plan "$values" --batch=4 --device_memory_budget=100000 2>&1); then
  fail "a budget for sizes known only in the run was accepted: $out"
fi
grep -q 'op 1 (non_zero) writes variable "i" as int64 \[2, -1\]: its size depends on values computed during the run, so no device memory budget can be planned' <<<"$out" ||
  fail "values budget: $out"
echo PASS
