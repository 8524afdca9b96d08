#!/usr/bin/env bash
# Sets everything up and runs the tests: every test of the optimised build
# and the library installed from it with its C, CMake and Python checks,
# then the library's, executor's and commands' tests under
# AddressSanitizer, the fuzz targets fuzzed for a bounded time under it,
# and the code that runs threads under ThreadSanitizer (docs/RELIABILITY.md
# says what each proves).
#
#   tools/test.sh          CI's share: bounded so that it finishes inside 90
#                          minutes on a 2-core machine
#   tools/test.sh --all    everything: every target under AddressSanitizer
#                          with UndefinedBehaviorSanitizer and under
#                          ThreadSanitizer, the whole model zoo, the library
#                          installed from a --config=cpu_only build and
#                          coverage-guided fuzzing of every fuzz target (hours)
#
# Each sanitizer configuration compiles every library again: on 2 cores
# a cold ASan+UBSan build of every target takes about an hour
# (docs/PERFORMANCE.md, "CI's sanitizer phases"), so CI's ASan share is
# the libraries' own tests, the executor's and the commands' code. TSan
# covers what runs threads of its own; under it the operators' tests would
# run each kernel on one thread (OpenMP's runtime is not instrumented:
# OMP_NUM_THREADS=1), proving nothing, so they are left to --all.
set -euo pipefail
cd "$(dirname "$0")/.."

all=false
case "${1:-}" in
  --all) all=true ;;
  "") ;;
  *) echo "usage: tools/test.sh [--all]" >&2; exit 2 ;;
esac

bash tools/setup.sh

# Threads: scopes shared between threads, the executor's caches, control
# flow's step scopes, the Predictor's scope pool, data-parallel replicas and
# the trainer's checkpoint lock, offload copies, the C API's predictors on
# many threads, the server's transport, admission, batcher, model manager
# and repository (their polling and swap threads). Not the gRPC tests:
# Debian's libgrpc and Abseil are not instrumented, so TSan cannot see what
# orders their threads' accesses and reports races inside them (the epoll
# descriptor, Abseil's Mutex deadlock graph, a call's metadata).
tsan=(//platform/... //framework:scope_test //framework:variable_test
  //framework:step_scopes_test //framework:run_scope_cache_test
  //framework:run_buffer_pool_test //framework/serving/...
  //framework/parallel/... //framework/training/... //framework/memory/...
  //operators/control/... //tests:scope_stress_test //tests:executor_test
  //tests:kept_weights_test //tests:thread_defaults_test
  //c_api:c_api_threads_test
  //tools:http_server_test //tools:http_transport_test
  //tools:serve_models_test //tools:serve_repository_test
  //tools:serve_admission_test //tools:serve_batcher_test
  //tools:serve_api_test)
# Memory: every library test, the executor, the commands' own code, the
# fuzzers' corpora and crash inputs (replayed), then each fuzz target's
# corpus mutated for 30 s (tools/fuzz/BUILD).
asan=(//platform/... //framework/... //operators/control/...
  //tests:scope_stress_test //tests:executor_test //tests:kept_weights_test
  //tests:thread_defaults_test //tools:http_server_test //tools:serve_models_test //tools:serve_json_test
  //tools:serve_metrics_test //tools:serve_admission_test //tools:serve_api_test
  //tools:import_onnx_command_test //tools/fuzz/... //tools/fuzz:mutation_tests)
asan_configs=(--config=asan)
if $all; then
  tsan=(//platform/... //framework/... //operators/control/... //tests/...
    //tools/... -//tools:serve_grpc_test -//tools:serve_grpc_run_test)
  asan=(//... //tools/fuzz:mutation_tests)
  asan_configs=(--config=asan --config=ubsan)
fi

# Runs a phase and says how long it took (CI's budget is kept by these).
phase() {
  local start=$SECONDS
  "$@"
  echo "test.sh: $((SECONDS - start)) s: $*" | cut -c 1-160
}

# Each configuration adds its outputs to Bazel's disk cache, which Bazel 4
# never trims: keep it under its cap between them so the disk cannot fill.
phase bazel test //...
# The library installed from that build (links only: the shared libraries
# are made of the objects the tests use).
phase bash tools/install_test.sh --cuda
bash tools/trim_disk_cache.sh
phase bazel test --config=tsan -- "${tsan[@]}"
bash tools/trim_disk_cache.sh
# Tests only: the benchmarks are not built under the sanitizers.
phase bazel test "${asan_configs[@]}" --build_tests_only -- "${asan[@]}"
if $all; then
  bash tools/trim_disk_cache.sh
  phase bash tools/zoo/run_all.sh
  # The library as installed by default: a --config=cpu_only build.
  phase bash tools/install_test.sh
  for target in net net_run onnx npy params; do
    FUZZ_TARGET=$target phase bash tools/fuzz/run.sh 600
  done
fi
echo "all test configurations passed (opt, tsan, asan, fuzzing$($all && echo ', ubsan, zoo, libFuzzer'))"
