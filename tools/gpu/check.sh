#!/usr/bin/env bash
# The GPU checks, on a machine with a CUDA device, in the root of a copy of
# this repository holding .gpu_pack/pack.tar.gz (tools/gpu/pack.sh): the
# CUDA tests, the example nets on cuda:0 against the CPU, a short training
# run on each, and the net benchmarks on cuda:0. Full logs go to $OUT (or
# ./gpu_logs); a summary is printed last. `check.sh quick` leaves out the
# training runs and the benchmarks. FIRST=<gtest filter> runs those tests
# before everything else (device time is short; what matters most goes
# first), and the full test run then leaves them out; `check.sh first`
# runs only those. BENCH=<regex> picks the benchmarks.
set -uo pipefail
logs=${OUT:-gpu_logs}
mkdir -p "$logs"
tar -xzf .gpu_pack/pack.tar.gz -C /tmp
pack=/tmp/gpu_pack
# cuBLAS and cuDNN as this machine has them: the toolkit's or a Python
# package's copy.
library_path=$pack/lib
for name in libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
  found=$(find /usr/local /usr/lib /opt -name "$name" 2>/dev/null | head -1)
  if [[ -z "$found" ]]; then
    echo "check: $name not found" >&2
    exit 1
  fi
  library_path=$library_path:$(dirname "$found")
done
export LD_LIBRARY_PATH=$library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
summary=()
step() {  # step NAME COMMAND...: runs it, logs it, records the outcome
  local name=$1
  shift
  local start=$SECONDS
  if "$@" >"$logs/$name.log" 2>&1; then
    summary+=("ok    $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s): see $name.log")
  fi
}
nvidia-smi -L | tee "$logs/device.txt"
sf=$pack/bin/scopeflow
full=true
rest=true
if [[ "${1:-}" == quick ]]; then full=false; fi
if [[ "${1:-}" == first ]]; then
  full=false
  rest=false
fi
rest_filter='*'
default_benchmarks='BM_(AddChain|Mlp|Cnn/batch:[0-9]+/layout:0|MatmulNet1024|Elementwise)'
if [[ -n "${FIRST:-}" ]]; then
  step cuda_ops_first "$pack/bin/cuda_ops_test" --gtest_filter="$FIRST"
  rest_filter="-$FIRST"
fi
if $full && [[ -f "$pack/digits.csv.gz" ]]; then
  for place in cpu cuda:0; do
    step "train_mlp_${place%%:*}" "$sf" train \
      --flagfile=examples/digits/mlp.flags --data="$pack/digits.csv.gz" \
      --epochs=3 --place="$place"
  done
fi
if $full; then
  step benchmark_cuda "$pack/bin/net_benchmark" --place=cuda:0 \
    --benchmark_filter="${BENCH:-$default_benchmarks}" \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
fi
if $rest; then
  step cuda_ops_test "$pack/bin/cuda_ops_test" --gtest_filter="$rest_filter"
  for example in mlp cnn; do
    for place in cpu cuda:0; do
      step "run_${example}_${place%%:*}" "$sf" run "examples/$example/main.pbtxt" \
        --startup "examples/$example/startup.pbtxt" \
        --feed image=examples/mlp/digit.npy --repeat 20 --place "$place"
    done
  done
fi
for log in cuda_ops_first cuda_ops_test; do
  if [[ -f "$logs/$log.log" ]]; then
    grep -E '^\[  (FAILED|PASSED|SKIPPED) ' "$logs/$log.log" | head -40
  fi
done
for example in mlp cnn; do
  for place in cpu cuda; do
    if [[ -f "$logs/run_${example}_${place}.log" ]]; then
      echo "== $example on $place"
      grep -E 'probabilities|latency' "$logs/run_${example}_${place}.log"
    fi
  done
done
if $full; then
  for place in cpu cuda; do
    echo "== train on $place"
    grep -i -E 'epoch 3|accuracy' "$logs/train_mlp_${place}.log" | tail -2
  done
  grep -E '_median' "$logs/benchmark_cuda.log"
fi
printf '%s\n' "${summary[@]}"
