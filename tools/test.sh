#!/usr/bin/env bash
# Sets everything up and runs every test: the optimised build, then the core
# libraries under ThreadSanitizer and AddressSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh

# Core libraries and the concurrency stress test, checked by the sanitizers.
sanitized=(//platform/... //framework/... //tests:scope_stress_test)

bazel test //...
bazel test --config=tsan "${sanitized[@]}"
bazel test --config=asan "${sanitized[@]}"
echo "all test configurations passed (opt, tsan, asan)"
