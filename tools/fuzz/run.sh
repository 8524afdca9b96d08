#!/usr/bin/env bash
# Builds a fuzz target if needed and fuzzes for SECONDS (default 180) on a
# copy of its seeds in a temporary folder, so the checked-in seeds stay as
# they are: FUZZ_TARGET=net (default) tools/fuzz/net_fuzzer on corpus/ and
# crashes/, FUZZ_TARGET=onnx tools/fuzz/onnx_fuzzer on onnx_corpus/ and
# onnx_crashes/.
#
# FUZZ_TARGET=net_run runs what net_fuzzer prepares, on net_fuzzer's seeds.
#
# Usage: [FUZZ_TARGET=net|net_run|onnx|npy|params] tools/fuzz/run.sh [SECONDS]
# (npy and params: seeds in npy_corpus/ and params_corpus/, regression
# inputs in npy_crashes/ and params_crashes/.)
# FUZZ_BUILD_DIR and FUZZ_CXXFLAGS pass on to build.sh: e.g. to fuzz past a
# known integer overflow, FUZZ_CXXFLAGS=-fno-sanitize=signed-integer-overflow
# with its own FUZZ_BUILD_DIR.
# Before fuzzing, each input under tools/fuzz/crashes/ is replayed: one that
# still crashes is reported (its bug is not fixed yet), the others join the
# corpus. New crash inputs are written to the temporary folder, which is
# then kept and named at the end; see README.md to minimise them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-180}"
target="${FUZZ_TARGET:-net}"
export FUZZ_TARGET="$target"
prefix=""
[[ $target == net ]] || prefix="${target}_"
seeds="${prefix}corpus"
[[ $target == net_run ]] && seeds=corpus

bin="$("$here/build.sh" | tail -n 1)"
work="$(mktemp -d "${TMPDIR:-/tmp}/scopeflow-fuzz.XXXXXX")"
cleanup() {
  if [[ -z "$(ls -A "$work/artifacts" 2>/dev/null)" ]]; then
    rm -rf "$work"
  else
    echo "fuzz: crash inputs kept in $work/artifacts" >&2
  fi
}
trap cleanup EXIT

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

mkdir -p "$work/corpus" "$work/artifacts"
cp "$here/$seeds"/* "$work/corpus/"

# --- Regression inputs. -----------------------------------------------------
still=0
for f in "$here/${prefix}crashes"/*; do
  [[ -f $f ]] || continue
  if "$bin" -rss_limit_mb=2048 -timeout=10 "$f" >"$work/replay.log" 2>&1; then
    cp "$f" "$work/corpus/"
  else
    echo "fuzz: still crashes: ${f#"$root"/}" >&2
    grep -m 1 -E 'ERROR: |runtime error:' "$work/replay.log" >&2 || true
    still=$((still + 1))
  fi
done
if ((still > 0)); then
  echo "fuzz: $still regression input(s) still crash; fuzzing on" >&2
fi

# --- A dictionary of the words inputs are made of. -------------------------
# Op types are looked up in hash maps, which libFuzzer cannot see through,
# so the registered names (and slot and attribute names) are given to it.
if [[ $target == net || $target == net_run ]]; then
  {
    find "$root/operators" -name '*.cc' ! -name '*_test.cc' \
      ! -name '*_benchmark.cc' -print0 |
      xargs -0 grep -ohE 'SF_REGISTER_OP\([a-z0-9_]+\)|\.(Input|Output|Attr)\("[A-Za-z0-9_@]+"' |
      sed -E 's/^SF_REGISTER_OP\((.*)\)$/\1/; s/^\.[A-Za-z]+\("(.*)"$/\1/'
    # Field names and enum values of the text format.
    grep -oE '^\s*(repeated |optional )?[A-Za-z0-9_.]+ [a-z_0-9]+ = [0-9]+;' \
      "$root/proto/framework.proto" | awk '{print $(NF-2)}'
    grep -oE '^\s*[A-Z][A-Z0-9_]+ = [0-9]+;' "$root/proto/framework.proto" |
      awk '{print $1}'
  } | sort -u | sed 's/.*/"&"/' >"$work/net.dict"
elif [[ $target == npy ]]; then
  # The header's keys and the values the reader knows.
  printf '"%s"\n' "'descr'" "'fortran_order'" "'shape'" "'<f4'" "'<f8'" \
    "'<f2'" "'<i4'" "'<i8'" "'|u1'" "'|i1'" "'|b1'" True False \
    "\\x93NUMPY" >"$work/net.dict"
elif [[ $target == params ]]; then
  printf '"%s"\n' SFPARAM1 "@CHECKPOINT_INFO" "optimizer " "state " \
    >"$work/net.dict"
else
  # ONNX op types and attribute names the converters look for (a binary
  # model holds them as plain strings).
  find "$root/framework/onnx" -name 'convert*.cc' ! -name '*_test.cc' -print0 |
    xargs -0 grep -ohE '"[A-Za-z_][A-Za-z0-9_]{1,30}"' | tr -d '"' |
    sort -u | sed 's/.*/"&"/' >"$work/net.dict"
fi

# --- Fuzz. ------------------------------------------------------------------
# libFuzzer stops at a crash; it is restarted on the grown corpus until the
# time is spent, so a known bug does not cut the run short. Crashes are
# grouped by their first sanitizer line.
echo "fuzz: $bin for ${seconds}s in $work" >&2
deadline=$((SECONDS + seconds))
rounds=0 runs=0 crashes=0
: >"$work/signatures"
while ((SECONDS < deadline)); do
  rounds=$((rounds + 1))
  log="$work/fuzz.$rounds.log"
  status=0
  "$bin" -max_total_time=$((deadline - SECONDS)) -rss_limit_mb=2048 \
    -timeout=10 -dict="$work/net.dict" -artifact_prefix="$work/artifacts/" \
    -print_final_stats=1 "$work/corpus" >"$log" 2>&1 || status=$?
  n="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  runs=$((runs + ${n:-0}))
  stats="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
  [[ -n $stats ]] && last_stats=$stats
  ((status == 0)) && break
  crashes=$((crashes + 1))
  # The kind of error (without its values), the scopeflow function it
  # happened in and that function's caller.
  kind="$(grep -m 1 -E 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' "$log" |
    sed -E 's/^==[0-9]+==//; s/(runtime error: [^:0-9]*).*/\1/;
      s/(ERROR: [A-Za-z]+: [A-Za-z-]+).*/\1/; s#'"$root"'/##' || true)"
  frames="$(grep -m 2 -E '^ *#[0-9]+ .* in scopeflow::' "$log" |
    sed -E 's/.* in //; s/\(anonymous namespace\):://g; s/\(.*//' |
    paste -sd ',' | sed 's/,/ called by /' || true)"
  signature="${kind:-exit $status, see $log}${frames:+ in $frames}"
  artifact="$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)"
  echo "$signature"$'\t'"$artifact" >>"$work/signatures"
  if ! grep -q INITED "$log"; then
    echo "fuzz: crashed while loading the corpus; see $log" >&2
    break
  fi
done
elapsed=$((seconds - (deadline - SECONDS)))
echo "${last_stats:-no stats}"
echo "fuzz: ${elapsed}s, $rounds round(s), $runs executions" \
  "($((runs / (elapsed > 0 ? elapsed : 1))) exec/s), $crashes crash(es)"
if ((crashes > 0)); then
  echo "fuzz: distinct crashes (first input of each):"
  sort -t $'\t' -k1,1 -u "$work/signatures" | sed 's/^/  /'
  exit 1
fi
