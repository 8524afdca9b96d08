#!/usr/bin/env bash
# The loader (libscopeflow.so) and an engine export the C API and nothing
# else, under version node SCOPEFLOW_1; the loader has the soname its
# installed symlinks name and needs neither CUDA nor the framework's
# libraries; an engine built --config=cpu_only (MODE cpu_only) needs no
# CUDA library.
# Usage: libscopeflow_test.sh LOADER ENGINE cpu_only|any
set -euo pipefail
loader=$1
engine=$2
mode=$3
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
check_exports "$engine"

readelf --dynamic "$loader" | grep -q 'Library soname: \[libscopeflow.so.0\]' ||
  fail "the loader's soname is not libscopeflow.so.0"
echo "loader needs: $(needed "$loader" | tr '\n' ' ')"
if needed "$loader" | grep -i -E "$cuda_pattern|absl|protobuf|dnnl"; then
  fail "the loader needs more than the C and C++ runtime"
fi

echo "engine needs: $(needed "$engine" | tr '\n' ' ')"
if [[ $mode == cpu_only ]]; then
  if needed "$engine" | grep -i -E "$cuda_pattern"; then
    fail "the CPU engine needs a CUDA library"
  fi
  echo "the CPU engine needs no CUDA library"
fi
echo PASS
