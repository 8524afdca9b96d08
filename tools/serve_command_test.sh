#!/usr/bin/env bash
# scopeflow serve end to end: a model folder made with `scopeflow run
# --save_params`, the address printed at start, requests over bash's
# /dev/tcp (no client to install), a new version swapped in, and exit
# status 0 after SIGTERM.
set -euo pipefail
scopeflow=tools/scopeflow
mlp=examples/mlp
fail() { echo "FAIL: $*"; cat "$log" >&2 || true; exit 1; }

models="$TEST_TMPDIR/models/mlp"
mkdir -p "$models/1"
cp "$mlp/main.pbtxt" "$models/1/model.pbtxt"
"$scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --save_params="$models/1/params" >/dev/null

# The local addresses of the sockets listening on PORT, as the kernel lists
# them (hex: 0100007F is 127.0.0.1; all zeros, v4 or v6, is every address).
listening_on() {  # PORT
  local port_hex
  port_hex=$(printf '%04X' "$1")
  awk -v port=":$port_hex" '$4 == "0A" && substr($2, length($2) - 4) == port { print $2 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u | tr '\n' ' '
}

# An HTTP/1.0 request (the server closes after replying); prints the reply.
request() {  # METHOD PATH [BODY]
  local body=${3:-}
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf '%s %s HTTP/1.0\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
    "$1" "$2" "${#body}" "$body" >&3
  cat <&3
  exec 3<&-
}

log="$TEST_TMPDIR/serve.log"
"$scopeflow" serve "$models" --port=0 --threads=2 --poll_seconds=0.1 \
  --max_body_bytes=100000 --max_batch_size=4 --batch_timeout_micros=1000 \
  --drain_timeout_ms=2000 >"$log" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -q '^serving model' "$log" && break
  sleep 0.1
done
line=$(grep '^serving model' "$log") || fail "no address printed"
[[ $line =~ ^serving\ models\ mlp\ at\ http://127\.0\.0\.1:([0-9]+)\ \(2\ threads\)$ ]] ||
  fail "unexpected start line: $line"
port=${BASH_REMATCH[1]}

out=$(request GET /healthz)
grep -q '^HTTP/1.1 200 OK' <<<"$out" || fail "healthz status"
grep -q '"status":"ok"' <<<"$out" || fail "healthz body"

row=$(seq -s, 0 63 | sed 's/[0-9]\+/0.5/g')
out=$(request POST /v1/models/mlp:predict "{\"inputs\": {\"image\": [[$row]]}}")
grep -q '^HTTP/1.1 200 OK' <<<"$out" || fail "predict status: $out"
grep -q '{"outputs":\[\[' <<<"$out" || fail "predict body: $out"

out=$(request POST /v1/models/mlp:predict '{"inputs": {"image": [[1]]}}')
grep -q '^HTTP/1.1 400 Bad Request' <<<"$out" || fail "bad shape status: $out"
grep -q 'expected shape \[-1, 64\], got \[1, 1\]' <<<"$out" || fail "bad shape message"

# Bytes as printf makes them in, the replies out (the last request must
# ask to close).
raw() {  # FORMAT [ARGS...]
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf "$@" >&3
  cat <&3
  exec 3<&-
}

out=$(request GET /v1/models/mlp:predict)
grep -q '^HTTP/1.1 405 Method Not Allowed' <<<"$out" || fail "wrong method: $out"
grep -q '^Allow: POST' <<<"$out" || fail "no Allow header: $out"

body="{\"inputs\": {\"image\": [[$row]]}}"
out=$(raw 'POST /v1/models/mlp:predict HTTP/1.1\r\nContent-Length: %d\r\n\r\n%sGET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n' "${#body}" "$body")
[[ $(grep -o 'HTTP/1.1 200 OK' <<<"$out" | wc -l) -eq 2 ]] || fail "pipelined: $out"
grep -q '"status":"ok"' <<<"$out" || fail "pipelined health: $out"

chunk=$(head -c 60000 /dev/zero | tr '\0' ' ')
out=$(raw 'POST /v1/models/mlp:predict HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nea60\r\n%s\r\nea60\r\n%s\r\n0\r\n\r\n' "$chunk" "$chunk")
grep -q '^HTTP/1.1 413 Payload Too Large' <<<"$out" || fail "chunked over the limit: ${out:0:200}"

out=$(raw 'POST /v1/models/mlp:predict HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
grep -q '^HTTP/1.1 400 Bad Request' <<<"$out" || fail "ambiguous framing: $out"

out=$(raw 'POST /v1/models/mlp:predict HTTP/1.1\r\nX-Request-Timeout-Ms: soon\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "$body")
grep -q 'X-Request-Timeout-Ms must be a positive number' <<<"$out" || fail "bad deadline: $out"

# Idle connections do not hold the server's threads.
for i in 1 2 3 4 5 6 7 8; do
  exec {idle}<>"/dev/tcp/127.0.0.1/$port"
  idle_fds+=("$idle")
done
start=$(date +%s%N)
out=$(request GET /healthz)
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q '^HTTP/1.1 200 OK' <<<"$out" || fail "healthz beside idle connections: $out"
(( elapsed_ms < 1000 )) || fail "healthz beside idle connections took $elapsed_ms ms"
for fd in "${idle_fds[@]}"; do exec {fd}<&-; done

# A second version, moved into place whole, is picked up by the poll.
mkdir "$TEST_TMPDIR/staging"
cp "$models/1/model.pbtxt" "$models/1/params" "$TEST_TMPDIR/staging/"
mv "$TEST_TMPDIR/staging" "$models/2"
for _ in $(seq 100); do
  request GET /v2/models/mlp/versions/2/ready | grep -q '^HTTP/1.1 200' && break
  sleep 0.1
done
request GET /v1/models/mlp | grep -q '"state":"AVAILABLE","status":{"error_code":"OK","error_message":""},"version":"2"' ||
  fail "version 2 not served: $(request GET /v1/models/mlp)"
grep -q 'now serving model mlp version 2' "$log" || fail "swap not logged"

kill -TERM "$server"
status=0
wait "$server" || status=$?
[[ $status -eq 0 ]] || fail "exit status $status after SIGTERM"
grep -q 'Terminated: finishing the requests in flight' "$log" || fail "no stop message"
grep -q 'serve: stopped' "$log" || fail "no stopped message"

# Several models from a repository root, served over gRPC too; version
# folder 0001 is version 1, and a broken newer version is reported and
# skipped at start as it is while running.
repo="$TEST_TMPDIR/repo"
mkdir -p "$repo/a/0001" "$repo/a/2" "$repo/b/3"
cp "$models/1/model.pbtxt" "$models/1/params" "$repo/a/0001/"
cp "$models/1/model.pbtxt" "$models/1/params" "$repo/b/3/"
log="$TEST_TMPDIR/repo.log"
"$scopeflow" serve --model_repository="$repo" --port=0 --grpc_port=0 \
  --threads=2 --poll_seconds=0.1 >"$log" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -q '^serving gRPC' "$log" && break
  sleep 0.1
done
line=$(grep '^serving model' "$log") || fail "no address printed"
[[ $line =~ ^serving\ models\ a,\ b\ at\ http://127\.0\.0\.1:([0-9]+)\  ]] ||
  fail "unexpected start line: $line"
port=${BASH_REMATCH[1]}
line=$(grep '^serving gRPC' "$log") || fail "no gRPC address printed"
[[ $line =~ ^serving\ gRPC\ at\ 127\.0\.0\.1:([0-9]+)\ \(models:\ a,\ b\)$ ]] ||
  fail "unexpected gRPC line: $line"
grpc_port=${BASH_REMATCH[1]}
# Without --host, both protocols listen on the loopback address only
# (127.0.0.1, or as gRPC binds it, ::ffff:127.0.0.1 on an IPv6 socket).
for p in "$port" "$grpc_port"; do
  [[ $(listening_on "$p") =~ ^(0100007F|0000000000000000FFFF00000100007F):$(printf '%04X' "$p")\ $ ]] ||
    fail "port $p listens on $(listening_on "$p"), not 127.0.0.1 alone"
done
grep -q 'a/2 has neither model.pb nor model.pbtxt (serving version 1 instead)' "$log" ||
  fail "broken version not reported"
request GET /v1/models/a | grep -q '"version":"1"' || fail "version 0001 not served"
grep -c 'a/2 has neither' "$log" | grep -qx 1 || fail "broken version reported twice"

# Both REST protocols on one port, for each model: TensorFlow Serving's rows
# on model a, KServe v2's JSON infer on model b.
out=$(request POST /v1/models/a:predict "{\"instances\": [[$row]]}")
grep -q '^HTTP/1.1 200 OK' <<<"$out" || fail "TF Serving predict status: $out"
grep -q '^X-Model-Version: 1' <<<"$out" || fail "TF Serving predict version: $out"
grep -q '{"predictions":\[\[' <<<"$out" || fail "TF Serving predict body: $out"
out=$(request POST /v2/models/b/infer "{\"id\": \"q\", \"inputs\": [{\"name\": \"image\", \"shape\": [1, 64], \"datatype\": \"FP32\", \"data\": [$row]}]}")
grep -q '^HTTP/1.1 200 OK' <<<"$out" || fail "KServe infer status: $out"
grep -q '"model_name":"b","model_version":"3"' <<<"$out" ||
  fail "KServe infer model: $out"
grep -q '"name":"probabilities","datatype":"FP32","shape":\[1,10\]' <<<"$out" ||
  fail "KServe infer outputs: $out"
out=$(request GET /v2/health/ready)
grep -q '^HTTP/1.1 200 OK' <<<"$out" || fail "KServe ready: $out"

# A gRPC client in Python (Debian's python3-grpcio), where there is one:
# KServe's ModelInfer and TensorFlow Serving's Predict on model b.
if /usr/bin/python3 -c 'import grpc' 2>/dev/null; then
  out=$(/usr/bin/python3 tools/serve_grpc_client_test.py "$grpc_port" proto 2>&1) ||
    fail "python gRPC client: $out"
  grep -q '^PASS' <<<"$out" || fail "python gRPC client: $out"
  echo "python gRPC client: PASS"
else
  echo "python gRPC client: skipped (no python3-grpcio)"
fi
# REST clients in Python as the protocols' documentation writes them
# (Debian's python3-requests), where there is one.
if /usr/bin/python3 -c 'import requests' 2>/dev/null; then
  out=$(/usr/bin/python3 tools/serve_rest_client_test.py "$port" 2>&1) ||
    fail "python REST clients: $out"
  grep -q '^PASS' <<<"$out" || fail "python REST clients: $out"
  echo "python REST clients: PASS"
else
  echo "python REST clients: skipped (no python3-requests)"
fi
kill -TERM "$server"
status=0
wait "$server" || status=$?
[[ $status -eq 0 ]] || fail "exit status $status after SIGTERM (repository)"

# --host=0.0.0.0 listens on every address, for both protocols.
log="$TEST_TMPDIR/all.log"
"$scopeflow" serve "$models" --host=0.0.0.0 --port=0 --grpc_port=0 \
  --threads=1 >"$log" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -q '^serving gRPC' "$log" && break
  sleep 0.1
done
line=$(grep '^serving model' "$log") || fail "no address printed (--host)"
[[ $line =~ ^serving\ models\ mlp\ at\ http://0\.0\.0\.0:([0-9]+)\  ]] ||
  fail "unexpected start line: $line"
port=${BASH_REMATCH[1]}
line=$(grep '^serving gRPC' "$log") || fail "no gRPC address printed (--host)"
[[ $line =~ ^serving\ gRPC\ at\ 0\.0\.0\.0:([0-9]+)\  ]] ||
  fail "unexpected gRPC line: $line"
grpc_port=${BASH_REMATCH[1]}
for p in "$port" "$grpc_port"; do
  [[ $(listening_on "$p") =~ ^0+:$(printf '%04X' "$p")\ $ ]] ||
    fail "--host=0.0.0.0: port $p listens on $(listening_on "$p")"
done
kill -TERM "$server"
status=0
wait "$server" || status=$?
[[ $status -eq 0 ]] || fail "exit status $status after SIGTERM (--host)"

# Errors at start exit 1 and name the problem.
status=0
out=$("$scopeflow" serve "$models" --max_batch_size=-1 2>&1) || status=$?
[[ $status -eq 1 ]] || fail "negative batch size: exit status $status"
grep -q -- '--max_batch_size must be 0 (off) or more, got -1' <<<"$out" || fail "batch size message: $out"
status=0
out=$("$scopeflow" serve "$TEST_TMPDIR/absent" 2>&1) || status=$?
[[ $status -eq 1 ]] || fail "absent folder: exit status $status"
grep -q 'cannot list model folder .*absent' <<<"$out" || fail "absent folder message: $out"
status=0
out=$("$scopeflow" serve "$models" --model_repository="$repo" 2>&1) || status=$?
[[ $status -eq 1 ]] || fail "two sources: exit status $status"
grep -q 'give one of MODEL_DIR, --model_config_file and --model_repository (2 given)' <<<"$out" ||
  fail "two sources message: $out"
echo PASS
