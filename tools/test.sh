#!/usr/bin/env bash
# Sets everything up and runs every test: the optimised build, then the core
# libraries under ThreadSanitizer and AddressSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh

# The core libraries, the executor, the control-flow ops (which run blocks
# in scopes shared between threads), the concurrency stress test and the
# weight copies that concurrent runs share run
# under both sanitizers; the operators' kernels under AddressSanitizer too.
core=(//platform/... //framework/... //operators/control/... //tests:scope_stress_test //tests:executor_test //tests:kept_weights_test //tests:thread_defaults_test)

# Each configuration adds its outputs to Bazel's disk cache, which Bazel 4
# never trims: keep it under its cap between them so the disk cannot fill.
bazel test //...
bash tools/trim_disk_cache.sh
bazel test --config=tsan "${core[@]}"
bash tools/trim_disk_cache.sh
bazel test --config=asan "${core[@]}" //operators/...
echo "all test configurations passed (opt, tsan, asan)"
