#!/usr/bin/env bash
# The scopeflow command end to end on the example nets.
set -euo pipefail
scopeflow=tools/scopeflow
mlp=examples/mlp
fail() { echo "FAIL: $*"; exit 1; }

# info: the net as written.
out=$("$scopeflow" info "$mlp/main.pbtxt")
grep -q 'net "mlp" (format version 1): 1 block(s)' <<<"$out" || fail "info header"
grep -q 'var fc1.w .*float32 *\[64, 32\] *persistable' <<<"$out" || fail "info var"
grep -q 'op 3 softmax(X=\[logits\]) -> (Out=\[probabilities\])' <<<"$out" || fail "info op"

# dot: a Graphviz graph with every op and the edges between them.
out=$("$scopeflow" dot "$mlp/main.pbtxt")
grep -q '^digraph "mlp" {' <<<"$out" || fail "dot header"
grep -q '"op:1" \[shape=box, label="1: relu"\];' <<<"$out" || fail "dot op"
grep -q '"var:hidden" -> "op:1" \[label="X"\];' <<<"$out" || fail "dot edge"
grep -q '"var:fc1.w" \[shape=ellipse, style=filled' <<<"$out" || fail "dot parameter"

# check and dot on a net with a block: the recurrent step.
rnn=examples/sequence/rnn.pbtxt
out=$("$scopeflow" check "$rnn")
grep -q 'block 1 (attribute "sub_block" of op 4, recurrent): 5 op(s)' <<<"$out" || fail "check block"
grep -q '    inputs: x_t, h_prev' <<<"$out" || fail "check block inputs"
grep -q '    rnn.u *float32 *\[16, 16\] (enclosing)' <<<"$out" || fail "check enclosing"
out=$("$scopeflow" dot "$rnn")
grep -q 'subgraph "cluster_1" {' <<<"$out" || fail "dot cluster"
grep -q '"var:rnn.u" -> "op:1:' <<<"$out" || fail "dot enclosing edge"
grep -q '"op:4" -> "op:1:0" \[style=dashed, lhead="cluster_1", label="sub_block"\];' <<<"$out" || fail "dot block edge"

# check: inferred shapes, with the batch still unknown.
out=$("$scopeflow" check "$mlp/main.pbtxt")
grep -q 'net "mlp" is valid on cpu: 4 op(s)' <<<"$out" || fail "check header"
grep -q 'inputs: image' <<<"$out" || fail "check inputs"
grep -q 'probabilities *float32 *\[-1, 10\]' <<<"$out" || fail "check inferred"

# run: startup then main, fetches written as npy.
outdir="$TEST_TMPDIR/out"
mkdir -p "$outdir"
out=$("$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --repeat=5 --profile --output_dir="$outdir")
grep -q 'probabilities: float32 \[1, 10\] values \[' <<<"$out" || fail "run fetch"
grep -q 'latency over 5 run(s): median' <<<"$out" || fail "run latency"
grep -q 'fc .* 10 ' <<<"$out" || fail "run profile"
# The relu after the first fc runs inside it (op fusion): the fc writes the
# relu's output. --nofuse_ops runs each op as written.
grep -q '^ *0 fc  *hidden.relu  ' <<<"$out" || fail "run profile per op: $out"
grep -q '^  relu ' <<<"$out" && fail "relu not fused into fc: $out"
unfused=$("$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --profile --nofuse_ops)
grep -q '^ *0 fc  *hidden  ' <<<"$unfused" || fail "unfused per op: $unfused"
grep -q '^  relu ' <<<"$unfused" || fail "unfused: no relu: $unfused"
grep -qF "$(grep probabilities <<<"$out")" <<<"$unfused" ||
  fail "fused and unfused differ: $unfused"
# Host blocks on small pages only: the same numbers.
small_pages=$("$scopeflow" run "$mlp/main.pbtxt" \
  --startup="$mlp/startup.pbtxt" --feed="image=$mlp/digit.npy" --nohuge_pages)
grep -qF "$(grep probabilities <<<"$out")" <<<"$small_pages" ||
  fail "--nohuge_pages changed the output: $small_pages"
test -s "$outdir/probabilities.npy" || fail "fetch npy not written"
# Probabilities sum to one: mean of 10 values is 0.1.
grep -q 'probabilities: .*mean 0.1$' <<<"$out" || fail "softmax sums to one"

# Parameters saved after the startup net load back and give the same output.
params="$TEST_TMPDIR/mlp.params"
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --save_params="$params" | grep -q 'saved 4 parameter(s)' \
  || fail "save_params"
from_file=$("$scopeflow" run "$mlp/main.pbtxt" --params="$params" --feed="image=$mlp/digit.npy")
grep -q 'loaded 4 parameter(s)' <<<"$from_file" || fail "params load"
grep -qF "$(grep probabilities <<<"$from_file")" <<<"$out" || fail "params output differs"
head -c 100 "$params" >"$TEST_TMPDIR/cut.params"
expect_error_early() {
  if err=$("$scopeflow" run "$mlp/main.pbtxt" --params="$TEST_TMPDIR/cut.params" \
    --feed="image=$mlp/digit.npy" 2>&1); then fail "truncated params accepted"; fi
  grep -q 'is truncated' <<<"$err" || fail "truncated params message: $err"
}
expect_error_early

# The same seeds give the same output.
again=$("$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" | grep probabilities)
grep -qF "$again" <<<"$out" || fail "not reproducible"

# The CNN example runs on the same image.
cnn=$("$scopeflow" run examples/cnn/main.pbtxt --startup=examples/cnn/startup.pbtxt \
  --feed="image=$mlp/digit.npy")
grep -q 'probabilities: float32 \[1, 10\] .*mean 0.1$' <<<"$cnn" || fail "cnn run: $cnn"

# By default its convolutions run in a faster layout with their relus
# fused: with --layout=nhwc, transposes lead in and out of the NHWC region;
# with --layout=nchw8c, the first convolution reads the NCHW image and a
# transfer_layout leads out; with --layout=nchw16c, the first convolution's
# 8 channels do not fill a block, so it stays NCHW (its relu fused all the
# same, by the conv-fusion pass), and the second reads its output and
# writes blocks. --nochannels_last --nofuse_ops runs the net as written.
# All give the same probabilities.
fast=$("$scopeflow" run examples/cnn/main.pbtxt --startup=examples/cnn/startup.pbtxt \
  --feed="image=$mlp/digit.npy" --profile --layout=nhwc)
grep -q '^  transpose ' <<<"$fast" || fail "channels-last: no transpose: $fast"
grep -q '^  relu ' <<<"$fast" && fail "channels-last: relu not fused: $fast"
grep -q 'probabilities: .*mean 0.1$' <<<"$fast" || fail "channels-last: $fast"
for layout in nchw8c nchw16c; do
  blocked=$("$scopeflow" run examples/cnn/main.pbtxt --startup=examples/cnn/startup.pbtxt \
    --feed="image=$mlp/digit.npy" --profile --layout=$layout)
  grep -q '^  transfer_layout ' <<<"$blocked" || fail "$layout: no transfer: $blocked"
  grep -q '^  transpose ' <<<"$blocked" && fail "$layout: transposed: $blocked"
  grep -q '^  relu ' <<<"$blocked" &&
    fail "$layout: relus not fused as expected: $blocked"
  grep -qF "$(grep probabilities <<<"$fast")" <<<"$blocked" ||
    fail "$layout and nhwc differ: $blocked"
done
if err=$("$scopeflow" run examples/cnn/main.pbtxt --startup=examples/cnn/startup.pbtxt \
  --feed="image=$mlp/digit.npy" --layout=nchw4c 2>&1); then
  fail "unknown layout accepted"
fi
grep -q -- '--layout must be auto, nhwc, nchw8c or nchw16c, got "nchw4c"' <<<"$err" ||
  fail "unknown layout message: $err"
plain=$("$scopeflow" run examples/cnn/main.pbtxt --startup=examples/cnn/startup.pbtxt \
  --feed="image=$mlp/digit.npy" --profile --nochannels_last --nofuse_ops)
grep -q '^  relu ' <<<"$plain" || fail "as written: no relu: $plain"
grep -q '^  transpose ' <<<"$plain" && fail "as written: transposed: $plain"
grep -q 'probabilities: .*mean 0.1$' <<<"$plain" || fail "as written: $plain"

# import-onnx: a hand-written ONNX model, encoded here, converts and runs;
# y = softmax(relu(x W1 + b1) W2 + b2) for x = [1, 2, 3, 4] is
# softmax([1.85, 4.65]) = [0.0573242, 0.942676] by hand.
protoc --encode=onnx.ModelProto -I proto proto/onnx.proto \
  <examples/onnx/linear_relu.textproto >"$TEST_TMPDIR/model.onnx"
imported=$("$scopeflow" import-onnx "$TEST_TMPDIR/model.onnx" -o "$TEST_TMPDIR/model.pb" \
  --params="$TEST_TMPDIR/model.params")
grep -q '4 parameter(s)' <<<"$imported" || fail "import-onnx: $imported"
onnx_out=$("$scopeflow" run "$TEST_TMPDIR/model.pb" --params="$TEST_TMPDIR/model.params" \
  --feed="x=examples/onnx/x.npy")
grep -q 'y: float32 \[1, 2\] values \[0.057324[0-9]*, 0.94267[0-9]*\]' <<<"$onnx_out" ||
  fail "imported model: $onnx_out"

# train: the digits examples learn; a resumed run continues from the newest
# checkpoint and ends where an uninterrupted one does.
ckpt="$TEST_TMPDIR/ckpt"
first=$("$scopeflow" train --flagfile=examples/digits/mlp.flags --epochs=2 \
  --checkpoint-dir="$ckpt")
grep -q '^epoch 2/2: .*test accuracy' <<<"$first" || fail "train: $first"
[[ -n "$(ls "$ckpt")" ]] || fail "train wrote no checkpoint"
resumed=$("$scopeflow" train --flagfile=examples/digits/mlp.flags --epochs=4 \
  --checkpoint-dir="$ckpt" --resume)
grep -q '^resumed from .* at step 88$' <<<"$resumed" || fail "resume: $resumed"
straight=$("$scopeflow" train --flagfile=examples/digits/mlp.flags --epochs=4)
[[ "$(grep '^final' <<<"$resumed")" == "$(grep '^final' <<<"$straight")" ]] ||
  fail "resumed run ended elsewhere: $resumed vs $straight"
cnn_train=$("$scopeflow" train --flagfile=examples/digits/cnn.flags --epochs=3)
accuracy=$(sed -n 's/^final: .*test accuracy \([0-9.]*\)%$/\1/p' <<<"$cnn_train")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 90) }' || fail "cnn learns too little: $cnn_train"

# Errors: clear message, exit status 1.
expect_error() {
  local pattern=$1; shift
  local err
  if err=$("$scopeflow" "$@" 2>&1); then fail "expected an error for: $*"; fi
  grep -q -- "$pattern" <<<"$err" || fail "expected '$pattern', got: $err"
}
expect_error 'input "image" is not fed' run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt"
expect_error 'persistable variable "fc1.w" is not in the scope' \
  run "$mlp/main.pbtxt" --feed="image=$mlp/digit.npy"
expect_error 'expected name=FILE.npy' run "$mlp/main.pbtxt" --feed=image
expect_error 'unknown place "gpu"' check "$mlp/main.pbtxt" --place=gpu
bad="$TEST_TMPDIR/bad.pbtxt"
echo 'format_version: 3' >"$bad"
expect_error 'has format_version 3; this build reads version 1' info "$bad"
sed 's/type: "relu"/type: "rleu"/' "$mlp/main.pbtxt" >"$TEST_TMPDIR/typo.pbtxt"
expect_error 'op 1 (rleu): unknown op type' check "$TEST_TMPDIR/typo.pbtxt"
head -c 100 "$TEST_TMPDIR/model.onnx" >"$TEST_TMPDIR/cut.onnx"
expect_error 'cut.onnx' import-onnx "$TEST_TMPDIR/cut.onnx" -o "$TEST_TMPDIR/cut.pb"
[[ ! -e "$TEST_TMPDIR/cut.pb" ]] || fail "a failed import wrote its output"
sed 's/op_type: "Relu"/op_type: "Rleu"/' examples/onnx/linear_relu.textproto |
  protoc --encode=onnx.ModelProto -I proto proto/onnx.proto >"$TEST_TMPDIR/typo.onnx"
expect_error 'relu.*Rleu' import-onnx "$TEST_TMPDIR/typo.onnx" -o "$TEST_TMPDIR/typo.pb"
expect_error 'cannot open .*nowhere.csv' train --flagfile=examples/digits/mlp.flags \
  --data="$TEST_TMPDIR/nowhere.csv"
expect_error '--split must be shuffled or tail' train --flagfile=examples/digits/mlp.flags \
  --split=random
if "$scopeflow" >/dev/null 2>&1; then fail "expected a usage error"; fi

# Command-line conventions: help exits 0 and shows the command's own flags,
# unknown commands and flags are named, the version is VERSION's.
for args in --help -h "run --help" "train -h" "ops --help" "params --help"; do
  # shellcheck disable=SC2086
  "$scopeflow" $args >/dev/null || fail "scopeflow $args exited $?"
done
out=$("$scopeflow" --help)
grep -q '^  params --to_npz' <<<"$out" || fail "help lists params: $out"
grep -q -- '--huge_pages' <<<"$out" || fail "help lists common flags: $out"
# Every flag belongs to a command's list (tools/command_line.cc) but those
# every command reads.
common=$(sed -n '/^flags of every command:$/,$p' <<<"$out" | grep -o '^  --[a-z_]*' | tr -d ' ' | sort | tr '\n' ' ')
[[ "$common" == "--flagfile --help --huge_pages --v --version " ]] ||
  fail "flags in no command's list (tools/command_line.cc): $common"
run_help=$("$scopeflow" run --help)
grep -q -- '^  --feed  run: inputs as name=FILE.npy' <<<"$run_help" || fail "run help: $run_help"
grep -q -- '--epochs' <<<"$run_help" && fail "run help shows train's flags: $run_help"
train_help=$("$scopeflow" train --help)
grep -q -- '^  --epochs  train: epochs to train (default: 10)' <<<"$train_help" ||
  fail "train help: $train_help"
grep -q -- '--feed ' <<<"$train_help" && fail "train help shows run's flags"
set +e
err=$("$scopeflow" frobnicate "$mlp/main.pbtxt" 2>&1); status=$?
set -e
[[ $status == 2 ]] || fail "unknown command exit status $status"
grep -q 'unknown command "frobnicate" (commands: run, check' <<<"$err" || fail "unknown command: $err"
expect_error "nosuchflag" check "$mlp/main.pbtxt" --nosuchflag
version=$("$scopeflow" --version)
grep -qE "^scopeflow $(tr -d '[:space:]' <VERSION) \((CPU only|CPU and CUDA) build, oneDNN [0-9]+\.[0-9]+\.[0-9]+\)$" <<<"$version" ||
  fail "version: $version"
grep -qE '^[0-9]+\.[0-9]+\.[0-9]+' VERSION || fail "VERSION is not semver"
# A flag another command reads is warned about; --v=0 (errors only) and
# SCOPEFLOW_LOG_LEVEL=error keep the warning quiet.
warned=$("$scopeflow" check "$mlp/main.pbtxt" --repeat=3 2>&1 >/dev/null)
grep -q 'warning: scopeflow check does not read --repeat' <<<"$warned" || fail "warning: $warned"
quiet=$("$scopeflow" check "$mlp/main.pbtxt" --repeat=3 --v=0 2>&1 >/dev/null)
[[ -z "$quiet" ]] || fail "--v=0 still warns: $quiet"
quiet=$(SCOPEFLOW_LOG_LEVEL=error "$scopeflow" check "$mlp/main.pbtxt" --repeat=3 2>&1 >/dev/null)
[[ -z "$quiet" ]] || fail "SCOPEFLOW_LOG_LEVEL=error still warns: $quiet"
bad_level=$(SCOPEFLOW_LOG_LEVEL=loud "$scopeflow" check "$mlp/main.pbtxt" 2>&1 >/dev/null)
grep -q 'SCOPEFLOW_LOG_LEVEL: log level "loud" is none of' <<<"$bad_level" || fail "bad level: $bad_level"
# Output folders are created.
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --output_dir="$TEST_TMPDIR/new/nested" >/dev/null
test -s "$TEST_TMPDIR/new/nested/probabilities.npy" || fail "output_dir not created"

# ops: one line per op, one op in full.
ops=$("$scopeflow" ops)
grep -qE '^relu +\(X\) -> \(Out\)  attrs: none  cpu: .*float32.*  grad: yes  onnx: Relu$' <<<"$ops" ||
  fail "ops relu line: $(grep '^relu ' <<<"$ops")"
[[ $(wc -l <<<"$ops") -gt 150 ]] || fail "ops lists too few: $(wc -l <<<"$ops")"
pool=$("$scopeflow" ops pool2d)
grep -q '^    pooling_type: string, required, must be one of max, avg$' <<<"$pool" || fail "ops pool2d: $pool"
grep -q '^  imported from ONNX: AveragePool, GlobalAveragePool, GlobalMaxPool, LRN, LpPool, MaxPool$' <<<"$pool" ||
  fail "ops pool2d onnx: $pool"
grep -q '^  gradient: pool2d_grad (differentiates X)$' <<<"$pool" || fail "ops pool2d grad: $pool"
expect_error 'no op named "rleu"' ops rleu

# Traces: Chrome trace JSON with one complete event per op and run.
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --repeat=2 --trace="$TEST_TMPDIR/trace.json" |
  grep -q "trace of .* event(s) written to $TEST_TMPDIR/trace.json" || fail "trace not written"
/usr/bin/python3 - "$TEST_TMPDIR/trace.json" <<'PY' || fail "trace content"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
ops = [e for e in events if e.get("cat") == "op"]
kernels = [e for e in events if e.get("cat") == "kernel"]
# The startup net's 4 ops once, the main net's 3 (fc, fc, softmax after
# fusion) in the warm-up run and 2 timed runs.
names = [e["name"] for e in ops]
assert names == ["gaussian_random", "fill_constant"] * 2 + ["fc", "fc", "softmax"] * 3, names
assert len(kernels) == len(ops)
for op, kernel in zip(ops, kernels):
    assert op["ph"] == "X" and op["dur"] >= kernel["dur"], (op, kernel)
    assert op["ts"] <= kernel["ts"], (op, kernel)
softmax = ops[-1]["args"]
assert softmax["inputs"] == ["logits: float32 [1, 10]"], softmax
assert softmax["output"] == "probabilities", softmax
PY
"$scopeflow" train --flagfile=examples/digits/mlp.flags --epochs=1 \
  --trace="$TEST_TMPDIR/train_trace.json" | grep -q 'trace of' || fail "train trace"
/usr/bin/python3 -c "
import json, sys
events = json.load(open(sys.argv[1]))['traceEvents']
names = {e['name'] for e in events if e.get('cat') == 'op'}
assert 'adam' in names and 'softmax_with_cross_entropy_grad' in names, names
" "$TEST_TMPDIR/train_trace.json" || fail "train trace content"

# Numerics: an infinity in the input stops the run at the first op whose
# output holds a NaN or an infinity.
/usr/bin/python3 -c "
import numpy as np, sys
x = np.load(sys.argv[1]); x[0, 5] = np.inf; np.save(sys.argv[2], x)
" "$mlp/digit.npy" "$TEST_TMPDIR/inf.npy"
expect_error 'check_numerics: op 0 (fc) wrote [-a-zA-Z]* to output "hidden.relu" (slot Out, float32 \[1, 32\]) at element [0-9]' \
  run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" --feed="image=$TEST_TMPDIR/inf.npy" --check_numerics
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$TEST_TMPDIR/inf.npy" >/dev/null || fail "without --check_numerics the run goes through"

# Parameter files: info lists them with CRC-32s; params converts to and
# from numpy's npz, which numpy reads and writes.
info=$("$scopeflow" info "$params")
grep -q "^parameter file $params: 4 tensor(s)$" <<<"$info" || fail "info params: $info"
grep -qE '^  fc1.w +float32 +\[64, 32\] +2048  [0-9a-f]{8}$' <<<"$info" || fail "info params line: $info"
"$scopeflow" params --to_npz "$params" "$TEST_TMPDIR/mlp.npz" | grep -q 'wrote 4 tensor(s)' ||
  fail "params --to_npz"
echo "$info" >"$TEST_TMPDIR/info.txt"
npz_check=(/usr/bin/python3 - "$TEST_TMPDIR/mlp.npz" "$TEST_TMPDIR/back.npz" "$TEST_TMPDIR/info.txt")
"${npz_check[@]}" <<'PY' || fail "numpy reads the npz"
import sys, zlib
import numpy as np
info = {}
for line in open(sys.argv[3]):
    parts = line.split()
    if len(parts) >= 4 and parts[0].startswith("fc"):
        info[parts[0]] = parts[-1]
arrays = np.load(sys.argv[1])
assert sorted(arrays.files) == sorted(info), (arrays.files, info)
for name in arrays.files:
    a = arrays[name]
    assert a.dtype == np.float32, a.dtype
    assert "%08x" % zlib.crc32(a.tobytes()) == info[name], name
assert arrays["fc1.w"].shape == (64, 32)
# Back through numpy's compressed writer, doubling fc2.b.
out = {name: arrays[name] for name in arrays.files}
out["fc2.b"] = out["fc2.b"] + 1.0
np.savez_compressed(sys.argv[2], **out)
PY
"$scopeflow" params --from_npz "$TEST_TMPDIR/mlp.npz" "$TEST_TMPDIR/again.params" >/dev/null
same=$("$scopeflow" run "$mlp/main.pbtxt" --params="$TEST_TMPDIR/again.params" --feed="image=$mlp/digit.npy")
grep -qF "$(grep probabilities <<<"$from_file")" <<<"$same" || fail "npz round trip changed the output: $same"
"$scopeflow" params --from_npz "$TEST_TMPDIR/back.npz" "$TEST_TMPDIR/back.params" >/dev/null
back=$("$scopeflow" info "$TEST_TMPDIR/back.params")
[[ "$(grep fc1.w <<<"$back")" == "$(grep fc1.w <<<"$info")" ]] || fail "fc1.w changed: $back"
[[ "$(grep fc2.b <<<"$back")" != "$(grep fc2.b <<<"$info")" ]] || fail "fc2.b did not change: $back"
expect_error 'exactly one of --to_npz' params "$params" "$TEST_TMPDIR/x.npz"
expect_error 'not a zip archive' params --from_npz "$params" "$TEST_TMPDIR/x.params"

# The guide's nets (docs/FIRST_NET.md) check and run as written.
awk -v dir="$TEST_TMPDIR" '
  /^```protobuf$/ { getline; split($2, path, "/"); file = dir "/" path[2]; next }
  /^```$/ { file = ""; next }
  file != "" { print > file }' docs/FIRST_NET.md
"$scopeflow" check "$TEST_TMPDIR/main.pbtxt" | grep -q 'probabilities *float32 *\[-1, 3\]' ||
  fail "guide: check"
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.array([[1, 2, 3, 4], [0, -1, 0, 1]], np.float32))" \
  "$TEST_TMPDIR/x.npy"
guide=$("$scopeflow" run "$TEST_TMPDIR/main.pbtxt" --startup="$TEST_TMPDIR/startup.pbtxt" \
  --feed="x=$TEST_TMPDIR/x.npy" --check_numerics)
grep -q 'probabilities: float32 \[2, 3\] .*mean 0.333' <<<"$guide" || fail "guide: run: $guide"
echo "scopeflow command: all checks passed"
