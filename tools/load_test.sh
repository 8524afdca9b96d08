#!/usr/bin/env bash
# Load test of `scopeflow serve` on loopback with wrk: the MLP of
# examples/mlp, one JSON request of one 8x8 image (the example's digit),
# keep-alive connections. For each server thread count: a warm-up, then a
# timed run (throughput, p50/p99 latency, errors); then resident memory
# before and after REQUESTS requests. Prints a Markdown summary at the end
# (the figures of docs/PERFORMANCE.md, "Serving").
#
#   tools/load_test.sh                   # 30 s at 64 connections, 1 and 2 threads
#   DURATION=10 THREADS="1 2 4" tools/load_test.sh
#
# Settings (environment): DURATION (s, 30), CONNECTIONS (64), THREADS
# (server thread counts, "1 2"), WRK_THREADS (1), REQUESTS (100000, the
# memory run), SCOPEFLOW (a built binary; default: bazel build).
# Besides wrk's figures it reports the CPU time the server and wrk used,
# as cores busy on average (they share the machine's cores).
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${DURATION:-30}
connections=${CONNECTIONS:-64}
server_threads=${THREADS:-1 2}
wrk_threads=${WRK_THREADS:-1}
requests=${REQUESTS:-100000}

command -v wrk >/dev/null || { echo "load_test: wrk is missing: run tools/setup.sh" >&2; exit 1; }
if [[ -z ${SCOPEFLOW:-} ]]; then
  bazel build //tools:scopeflow >&2
  SCOPEFLOW=bazel-bin/tools/scopeflow
fi

work=$(mktemp -d)
server=""
cleanup() {
  if [[ -n $server ]]; then kill -TERM "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The model folder: the example net and the parameters of its startup net.
mkdir -p "$work/models/mlp/1"
cp examples/mlp/main.pbtxt "$work/models/mlp/1/model.pbtxt"
"$SCOPEFLOW" run examples/mlp/main.pbtxt --startup=examples/mlp/startup.pbtxt \
  --feed=image=examples/mlp/digit.npy --save_params="$work/models/mlp/1/params" >/dev/null

# The request: the 64 pixels of examples/mlp/digit.npy (float32 after a
# 128-byte header), as JSON.
pixels=$(od -An -v -t f4 -j 128 -w256 examples/mlp/digit.npy | tr -s ' ' | sed 's/^ //; s/ $//; s/ /, /g')
body="{\"inputs\": {\"image\": [[$pixels]]}}"
cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
EOF

start_server() {  # THREADS
  "$SCOPEFLOW" serve "$work/models/mlp" --port=0 --threads="$1" >"$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 200); do
    grep -q '^serving model' "$work/serve.log" && break
    sleep 0.05
  done
  port=$(sed -n 's|^serving models .* at http://127.0.0.1:\([0-9]*\) .*|\1|p' "$work/serve.log")
  [[ -n $port ]] || { cat "$work/serve.log" >&2; exit 1; }
  url="http://127.0.0.1:$port/v1/models/mlp:predict"
}

stop_server() {
  kill -TERM "$server"
  local status=0
  wait "$server" || status=$?
  server=""
  [[ $status -eq 0 ]] || { echo "load_test: the server exited with $status after SIGTERM" >&2; exit 1; }
}

# The server's CPU time so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server/status"; }

served_requests() {
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3
  awk -F' ' '/^scopeflow_requests_total\{endpoint="predict",code="200"\}/ {print $2}' <&3
  exec 3<&-
}

# "2.10ms" / "850.00us" / "1.20s" -> milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) printf "%.3f", substr(v, 1, length(v) - 2) / 1000;
    else if (v ~ /ms$/) printf "%.3f", substr(v, 1, length(v) - 2);
    else if (v ~ /s$/) printf "%.3f", substr(v, 1, length(v) - 1) * 1000;
    else print v }'
}

export OMP_NUM_THREADS=1  # Parallelism is across requests.
summary=""
for threads in $server_threads; do
  start_server "$threads"
  wrk -t"$wrk_threads" -c"$connections" -d3s -s "$work/post.lua" "$url" >/dev/null
  echo "== server --threads $threads: wrk -t$wrk_threads -c$connections -d${duration}s --latency" >&2
  ticks=$(cpu_ticks)
  TIMEFORMAT='%U %S'
  { time wrk -t"$wrk_threads" -c"$connections" -d"${duration}s" --latency \
      -s "$work/post.lua" "$url" >"$work/wrk.out"; } 2>"$work/wrk.time"
  out=$(cat "$work/wrk.out")
  echo "$out" >&2
  server_cores=$(awk -v a="$ticks" -v b="$(cpu_ticks)" -v hz="$(getconf CLK_TCK)" -v d="$duration" \
    'BEGIN {printf "%.2f", (b - a) / hz / d}')
  wrk_cores=$(awk -v d="$duration" '{printf "%.2f", ($1 + $2) / d}' "$work/wrk.time")
  stop_server
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  total=$(awk '/requests in/ {print $1}' <<<"$out")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' <<<"$out")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  socket=$(awk -F'[ ,]+' '/Socket errors/ {print $4 + $6 + $8 + $10}' <<<"$out")
  errors=$((${non2xx:-0} + ${socket:-0}))
  summary+="| $threads | $rps | $total | $p50 ms | $p99 ms | $errors | $server_cores | $wrk_cores |"$'\n'
  if ((errors > 0)); then echo "load_test: $errors errors with --threads $threads" >&2; fi
done

# Memory: fresh, after a warm-up, after $requests more requests.
start_server 2
rss_fresh=$(rss_kib)
wrk -t"$wrk_threads" -c"$connections" -d3s -s "$work/post.lua" "$url" >/dev/null
rss_warm=$(rss_kib)
before=$(served_requests)
# wrk runs for a duration, not a count: stop it once the server's own
# counter has gone $requests past the warm-up.
wrk -t"$wrk_threads" -c"$connections" -d600s -s "$work/post.lua" "$url" >/dev/null &
load=$!
while (($(served_requests) < before + requests)); do sleep 0.1; done
kill "$load"
wait "$load" || true
after=$(served_requests)
rss_after=$(rss_kib)
stop_server

echo
echo "| server threads | requests/s | requests in ${duration} s | p50 | p99 | errors | server cores | wrk cores |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '%s' "$summary"
echo
echo "Resident memory (server --threads 2, $connections connections):"
echo "| when | RSS |"
echo "| --- | ---: |"
echo "| loaded, no request yet | $rss_fresh KiB |"
echo "| after a 3 s warm-up ($before requests) | $rss_warm KiB |"
echo "| after $((after - before)) more requests | $rss_after KiB |"
awk -v a="$rss_warm" -v b="$rss_after" -v f="$rss_fresh" -v n="$((after - before))" 'BEGIN {
  printf "growth over the %d requests: %+.2f%% (from the fresh start: %+.2f%%)\n", n, 100 * (b - a) / a, 100 * (b - f) / f }'
