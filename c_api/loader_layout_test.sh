#!/usr/bin/env bash
# The loader laid out as tools/install.sh installs it, both engines in its
# scopeflow/ folder, on a machine whose NVIDIA driver sees no device (the
# stand-in testdata/no_device_driver.c, found before any real driver): the
# loader asks the driver, passes over the CUDA engine, and runs the CPU
# engine, and no CUDA library is loaded into the process.
# Usage: loader_layout_test.sh PROBE LOADER CPU_ENGINE ENGINE DRIVER NET
set -euo pipefail
probe=$1
loader=$2
cpu_engine=$3
engine=$4
driver=$5
net=$6
fail() { echo "FAIL: $*" >&2; exit 1; }

root=${TEST_TMPDIR:-$(mktemp -d)}
lib=$root/prefix/lib
mkdir -p "$lib/scopeflow" "$root/driver"
cp "$loader" "$lib/libscopeflow.so"
cp "$cpu_engine" "$lib/scopeflow/libscopeflow_cpu.so"
cp "$engine" "$lib/scopeflow/libscopeflow_cuda.so"
cp "$driver" "$root/driver/libcuda.so.1"
unset SCOPEFLOW_ENGINE

out=$(LD_LIBRARY_PATH=$root/driver "$probe" "$lib/libscopeflow.so" "$net" 2>&1) ||
  fail "the probe failed: $out"
echo "$out"
grep -q '^no_device_driver: cuInit: no device$' <<<"$out" ||
  fail "the loader did not ask the driver"
grep -q '^engine cpu$' <<<"$out" || fail "not the CPU engine"
grep -q '^softmax right$' <<<"$out" || fail "wrong softmax"
grep -q '^cuda libraries: none$' <<<"$out" || fail "CUDA libraries were loaded"
echo PASS
