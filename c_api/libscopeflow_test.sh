#!/usr/bin/env bash
# The loader (libscopeflow.so) and the engines export the C API and nothing
# else, under version node SCOPEFLOW_1; the loader has the soname its
# installed symlinks name and needs neither CUDA nor the framework's
# libraries; the CPU engine needs no CUDA library, in a build with GPU code
# too.
# Usage: libscopeflow_test.sh LOADER CPU_ENGINE [ENGINE...]
set -euo pipefail
loader=$1
cpu_engine=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }

# Checks that $1 exports only sf_* symbols, among them the C API's core.
check_exports() {
  local exported others symbol
  # Defined, exported symbols (column 7 is the section index; UND is none).
  exported=$(readelf --dyn-syms --wide "$1" |
    awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") && $8 != "" {print $8}')
  [[ -n $exported ]] || fail "$1 exports nothing"
  others=$(grep -v -E '^sf_[a-z0-9_]+@@SCOPEFLOW_1$' <<<"$exported" |
    grep -v -E '^SCOPEFLOW_1(@@SCOPEFLOW_1)?$' || true)
  [[ -z $others ]] || fail "$1 exports more than the C API: $(head -5 <<<"$others")"
  for symbol in sf_api_version sf_engine_name sf_predictor_load \
    sf_predictor_run sf_predictor_run_into sf_tensor_wrap sf_status_message; do
    grep -q "^$symbol@@SCOPEFLOW_1$" <<<"$exported" || fail "$1 does not export $symbol"
  done
  echo "$(basename "$1"): exports $(wc -l <<<"$exported") symbols, all sf_* under SCOPEFLOW_1"
}

needed() { readelf --dynamic "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; }
cuda_pattern='cuda|cublas|cudnn|curand|nvrtc|nvidia'

check_exports "$loader"
check_exports "$cpu_engine"
for engine in "$@"; do check_exports "$engine"; done

readelf --dynamic "$loader" | grep -q 'Library soname: \[libscopeflow.so.0\]' ||
  fail "the loader's soname is not libscopeflow.so.0"
echo "loader needs: $(needed "$loader" | tr '\n' ' ')"
if needed "$loader" | grep -i -E "$cuda_pattern|absl|protobuf|dnnl"; then
  fail "the loader needs more than the C and C++ runtime"
fi

echo "CPU engine needs: $(needed "$cpu_engine" | tr '\n' ' ')"
if needed "$cpu_engine" | grep -i -E "$cuda_pattern"; then
  fail "the CPU engine needs a CUDA library"
fi
# Nor does it carry the CUDA runtime inside (libcudart_static).
if readelf --syms --wide "$cpu_engine" | grep -E ' (cuda|cublas|cudnn)[A-Z][A-Za-z0-9_]*$'; then
  fail "the CPU engine has CUDA runtime code in it"
fi
echo "the CPU engine needs no CUDA library"
for engine in "$@"; do
  echo "$(basename "$engine") needs: $(needed "$engine" | tr '\n' ' ')"
done
echo PASS
