#!/usr/bin/env bash
# Sets everything up and runs the tests: every test of the optimised build
# and the library installed from it with its C, CMake and Python checks,
# then the concurrent code under ThreadSanitizer and the libraries, the
# executor and the commands under AddressSanitizer.
#
#   tools/test.sh          CI's share: bounded so that it finishes well inside
#                          90 minutes on a 2-core machine from a cold cache
#   tools/test.sh --all    everything: every target under both sanitizers,
#                          the whole model zoo, the library installed from
#                          a --config=cpu_only build, and both fuzzers (hours)
#
# Each sanitizer configuration compiles every library again (about half an
# hour each from a cold cache on 2 cores), and the tests' own sources cost
# as much as the libraries under a sanitizer: CI's share runs under them
# the tests whose code is concurrent or manages memory (scopes, executor,
# control flow, serving, data-parallel training, memory plans, the commands),
# and leaves the operators' own tests (single-threaded kernels, each run by
# the nets of the framework's tests too) to --all.
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
# flow's step scopes, the Predictor's scope pool, data-parallel replicas,
# offload copies, the server's connections and model swaps.
tsan=(//platform/... //framework:scope_test //framework:variable_test
  //framework:step_scopes_test //framework:run_scope_cache_test
  //framework:run_buffer_pool_test //framework/serving/...
  //framework/parallel/... //framework/training:data_parallel_trainer_test
  //framework/training:data_parallel_places_test
  //framework/training:gradient_reducer_test //framework/memory/...
  //operators/control/... //tests:scope_stress_test //tests:executor_test
  //tests:kept_weights_test //tests:thread_defaults_test
  //tools:http_server_test //tools:serve_models_test
  //tools:serve_admission_test)
# Memory: every library test, the executor, the commands' own code and the
# fuzzers' corpora and crash inputs (replayed; fuzzing needs clang).
asan=(//platform/... //framework/... //operators/control/...
  //tests:scope_stress_test //tests:executor_test //tests:kept_weights_test
  //tests:thread_defaults_test //tools:http_server_test //tools:serve_models_test //tools:serve_json_test
  //tools:serve_metrics_test //tools:serve_admission_test //tools:serve_api_test
  //tools:import_onnx_command_test //tools/fuzz/...)
if $all; then
  tsan=(//platform/... //framework/... //operators/control/... //tests/...
    //tools/...)
  asan=(//...)
fi

# Each configuration adds its outputs to Bazel's disk cache, which Bazel 4
# never trims: keep it under its cap between them so the disk cannot fill.
bazel test //...
# The library installed from that build (links only: the shared libraries
# are made of the objects the tests use).
bash tools/install_test.sh --cuda
bash tools/trim_disk_cache.sh
bazel test --config=tsan "${tsan[@]}"
bash tools/trim_disk_cache.sh
bazel test --config=asan "${asan[@]}"
if $all; then
  bash tools/trim_disk_cache.sh
  bash tools/zoo/run_all.sh
  # The library as installed by default: a --config=cpu_only build.
  bash tools/install_test.sh
  FUZZ_TARGET=net bash tools/fuzz/run.sh 600
  FUZZ_TARGET=onnx bash tools/fuzz/run.sh 600
fi
echo "all test configurations passed (opt, tsan, asan$($all && echo ', zoo, fuzzers'))"
