#!/usr/bin/env bash
# The scopeflow command against hostile or careless inputs: each must be an
# error naming the thing at fault, or be handled without touching anything
# outside what the user named (docs/RELIABILITY.md).
set -euo pipefail
scopeflow=tools/scopeflow
mlp=examples/mlp
dir="$TEST_TMPDIR/hostile"
mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }
expect_error() {
  local pattern=$1; shift
  local err
  if err=$("$scopeflow" "$@" 2>&1); then fail "expected an error for: $*"; fi
  grep -q -- "$pattern" <<<"$err" || fail "expected '$pattern', got: $err"
}

# A float32 .npy of shape (2,) with header dict $1 (numpy's layout).
npy() {
  python3 - "$1" <<'PY'
import struct, sys
d = sys.argv[1].encode()
header = d + b" " * ((64 - (10 + len(d) + 1) % 64) % 64) + b"\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
                        + header + struct.pack("<2f", -1.0, 2.0))
PY
}
npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" >"$dir/x.npy"

# A net whose outputs are named to escape the output folder.
cat >"$dir/names.pbtxt" <<'PB'
format_version: 1
name: "names"
blocks {
  vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 2 ] }
  vars { name: "../victim" dtype: DATA_TYPE_FLOAT32 shape: [ 2 ] }
  vars { name: "/abs/path" dtype: DATA_TYPE_FLOAT32 shape: [ 2 ] }
  vars { name: "plain" dtype: DATA_TYPE_FLOAT32 shape: [ 2 ] }
  ops { type: "relu" inputs { slot: "X" vars: "x" } outputs { slot: "Out" vars: "../victim" } }
  ops { type: "relu" inputs { slot: "X" vars: "x" } outputs { slot: "Out" vars: "/abs/path" } }
  ops { type: "relu" inputs { slot: "X" vars: "x" } outputs { slot: "Out" vars: "plain" } }
}
PB
mkdir -p "$dir/out"
out=$("$scopeflow" run "$dir/names.pbtxt" --feed="x=$dir/x.npy" --output_dir="$dir/out")
[[ ! -e "$dir/victim.npy" ]] || fail "an output escaped the output folder"
[[ "$(ls "$dir/out" | sort | tr '\n' ' ')" == "%2E.%2Fvictim.npy %2Fabs%2Fpath.npy plain.npy " ]] ||
  fail "output names: $(ls "$dir/out")"
grep -qF '("../victim" written as '"$dir"'/out/%2E.%2Fvictim.npy' <<<"$out" ||
  fail "the encoded name's mapping is not printed: $out"
grep -q 'plain.*written as' <<<"$out" && fail "a plain name was reported as encoded"

# --save_params over a file: its mode is kept, a link stays a link.
params="$dir/mlp.params"
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --save_params="$params" >/dev/null
chmod 0640 "$params"
ln -s mlp.params "$dir/link.params"
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --save_params="$dir/link.params" >/dev/null
[[ -L "$dir/link.params" ]] || fail "--save_params replaced the link by a file"
[[ "$(stat -c %a "$params")" == 640 ]] || fail "mode not kept: $(stat -c %a "$params")"
[[ -z "$(ls "$dir" | grep '\.tmp\.')" ]] || fail "temporary files left: $(ls "$dir")"

# Parameter files: names the net lacks, a name twice, bytes after the end.
expect_error 'holds "fc[12]\.[wb]", .*which net "names" does not have' \
  run "$dir/names.pbtxt" --params="$params" --feed="x=$dir/x.npy"
"$scopeflow" run "$dir/names.pbtxt" --params="$params" --feed="x=$dir/x.npy" \
  --allow_unused_params | grep -q 'loaded 4 parameter(s)' || fail "--allow_unused_params"
{ cat "$params"; printf 'x'; } >"$dir/trailing.params"
expect_error 'trailing.params has 1 byte(s) after its end record' \
  run "$mlp/main.pbtxt" --params="$dir/trailing.params" --feed="image=$mlp/digit.npy"

# Feeds: one input fed twice, an .npy header giving a key twice.
expect_error '--feed feeds "x" twice' \
  run "$dir/names.pbtxt" --feed="x=$dir/x.npy,x=$dir/x.npy"
npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (9,), }" \
  >"$dir/twice.npy"
expect_error "twice.npy: npy header gives 'shape' twice" \
  run "$dir/names.pbtxt" --feed="x=$dir/twice.npy"

# A float literal float32 cannot hold.
sed 's/attrs { name: "axis" i: -1 }/attrs { name: "axis" i: -1 }\n    attrs { name: "scale" f: 3.5e38 }/' \
  "$mlp/main.pbtxt" >"$dir/huge_float.pbtxt"
expect_error '3.5e38 is outside the range of float32' check "$dir/huge_float.pbtxt"

# Resuming with another optimizer is refused unless its state is reset.
ckpt="$dir/ckpt"
"$scopeflow" train --flagfile=examples/digits/mlp.flags --epochs=1 \
  --checkpoint_dir="$ckpt" >/dev/null
expect_error 'holds the state of optimizer "adam".*this run uses "sgd"' \
  train --flagfile=examples/digits/mlp.flags --epochs=2 --checkpoint_dir="$ckpt" \
  --resume --optimizer=sgd
reset=$("$scopeflow" train --flagfile=examples/digits/mlp.flags --epochs=2 \
  --checkpoint_dir="$ckpt" --resume --optimizer=sgd --reset_optimizer_state)
grep -q '^resumed from .* at step 44$' <<<"$reset" || fail "reset: $reset"
[[ -e "$ckpt/scopeflow.lock" ]] || fail "no lock file in the checkpoint folder"

echo "hostile inputs: all checks passed"
