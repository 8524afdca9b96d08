#!/usr/bin/env bash
# Installs scopeflow to a temporary prefix (tools/install.sh), checks that
# the loader and the CPU engine need no CUDA library, builds the C API
# examples against the prefix as outside projects do (the C program with
# plain cc and pkg-config, the C and C++ programs with CMake), runs them on
# the MLP and its parameters, and checks that they print exactly the
# probabilities `scopeflow run` computes on the same input, and the
# installed Python module does too. Then the C programs again where no
# CUDA library is installed (every one hidden in a mount namespace, where
# the machine allows one; and always with the dynamic loader's log showing
# that none is loaded), and with a CUDA engine whose libraries are missing
# placed first, which the loader passes over.
# Usage: tools/install_test.sh [--cuda] [--bazel_flag=FLAG ...]  (passed to
# install.sh; with --cuda, from the build `bazel test //...` makes)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix=$work/prefix

bash tools/install.sh --prefix "$prefix" "$@" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "install.sh failed"; }
for file in lib/libscopeflow.so lib/libscopeflow.so.0 \
  lib/scopeflow/libscopeflow_cpu.so include/scopeflow_c_api.h \
  include/scopeflow_cxx.h lib/pkgconfig/scopeflow.pc bin/scopeflow \
  lib/cmake/scopeflow/scopeflowConfig.cmake \
  lib/cmake/scopeflow/scopeflowConfigVersion.cmake; do
  [[ -e $prefix/$file ]] || fail "$file is not installed"
done

# The loader, the CPU engine and everything they load: no CUDA library, and
# no NCCL (only the command, which trains on devices, links it).
engines=()
[[ -e $prefix/lib/scopeflow/libscopeflow_cuda.so ]] &&
  engines=("$prefix/lib/scopeflow/libscopeflow_cuda.so")
bash c_api/libscopeflow_test.sh "$prefix/lib/libscopeflow.so" \
  "$prefix/lib/scopeflow/libscopeflow_cpu.so" "${engines[@]}"
for lib in "$prefix/lib/libscopeflow.so" "$prefix/lib/scopeflow/libscopeflow_cpu.so"; do
  if ldd "$lib" | grep -i -E 'cuda|cublas|cudnn|nvrtc|nccl'; then
    fail "$lib loads a CUDA library"
  fi
  if ldd "$lib" | grep 'not found'; then
    fail "$lib needs a library that is not installed"
  fi
done

# The reference: the installed command on the saved parameters.
mlp=examples/mlp
"$prefix/bin/scopeflow" run "$mlp/main.pbtxt" --startup="$mlp/startup.pbtxt" \
  --feed="image=$mlp/digit.npy" --save_params="$work/mlp.params" >/dev/null
mkdir -p "$work/reference"
"$prefix/bin/scopeflow" run "$mlp/main.pbtxt" --params="$work/mlp.params" \
  --feed="image=$mlp/digit.npy" --output_dir="$work/reference" >/dev/null
python3 - "$work/reference/probabilities.npy" >"$work/expected.out" <<'PY'
import ast, struct, sys
data = open(sys.argv[1], "rb").read()
header_size = struct.unpack("<H", data[8:10])[0]
header = ast.literal_eval(data[10:10 + header_size].decode("latin1"))
assert header["descr"] == "<f4" and not header["fortran_order"], header
rows, cols = header["shape"]
values = struct.unpack("<%df" % (rows * cols), data[10 + header_size:])
for r in range(rows):
    print("probabilities[%d]:" % r +
          "".join(" %.9g" % v for v in values[r * cols:(r + 1) * cols]))
PY

# The C program, as its comment builds it: plain cc and pkg-config.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046  # pkg-config's words are meant to split.
cc -std=c99 -Wall -Werror examples/c_api/main.c \
  $(pkg-config --cflags --libs scopeflow) \
  -Wl,-rpath,"$(pkg-config --variable=libdir scopeflow)" -o "$work/mlp_c"

# Both programs again with CMake and find_package(scopeflow).
cmake -S examples/c_api -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "cmake could not configure the example"; }
cmake --build "$work/build" >>"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "cmake could not build the example"; }

# A CUDA engine whose CUDA library is missing: dlopen refuses it, as on a
# machine without CUDA, and the loader takes the CPU engine after it.
mkdir -p "$work/missing"
echo 'int scopeflow_missing_cuda(void) { return 0; }' >"$work/missing/cuda.c"
cc -shared -fPIC "$work/missing/cuda.c" -o "$work/missing/libscopeflow_missing_cuda.so"
echo 'int scopeflow_missing_cuda(void); int sf_api_version(void) { return scopeflow_missing_cuda(); }' \
  >"$work/missing/engine.c"
cc -shared -fPIC "$work/missing/engine.c" -L"$work/missing" -lscopeflow_missing_cuda \
  -o "$work/missing/libscopeflow_cuda.so"
rm "$work/missing/libscopeflow_missing_cuda.so"
fallback="$work/missing/libscopeflow_cuda.so:$prefix/lib/scopeflow/libscopeflow_cpu.so"

# Checks the output $2 of the example run $1.
check() {
  grep -q '^engine cpu$' <<<"$2" || fail "$1: engine: $2"
  grep -q '^input image: float32 \[-1, 64\]$' <<<"$2" || fail "$1: input: $2"
  grep -q '^output probabilities: float32 \[-1, 10\]$' <<<"$2" ||
    fail "$1: output: $2"
  if ! diff <(grep '^probabilities\[' <<<"$2") "$work/expected.out"; then
    fail "$1: the probabilities differ from scopeflow run's"
  fi
  echo "$1: the probabilities of scopeflow run"
}
args=("$mlp/main.pbtxt" "$work/mlp.params" "$mlp/digit.npy")
# The installed Python module, as a script outside the tree imports it.
[[ -e $prefix/lib/python3/dist-packages/scopeflow/_scopeflow.so ]] ||
  fail "the Python module is not installed"
out=$(cd "$work" && PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 - \
  "$OLDPWD/$mlp/main.pbtxt" "$work/mlp.params" "$OLDPWD/$mlp/digit.npy" <<'PY'
import sys
import numpy as np
import scopeflow
predictor = scopeflow.Predictor(sys.argv[1], params=sys.argv[2])
out = predictor.run({"image": np.load(sys.argv[3])})["probabilities"]
for r, row in enumerate(out):
    print("probabilities[%d]:" % r + "".join(" %.9g" % v for v in row))
PY
) || fail "the Python module failed: $out"
diff <(echo "$out") "$work/expected.out" ||
  fail "python: the probabilities differ from scopeflow run's"
echo "python: the probabilities of scopeflow run"

for program in "$work/mlp_c" "$work/build/mlp_c" "$work/build/mlp_cxx"; do
  out=$("$program" "${args[@]}") || fail "$program failed"
  check "${program#"$work"/}" "$out"
done

# Where no CUDA library is installed. Every CUDA library the dynamic
# loader's cache names, and the NVIDIA driver, is hidden (/dev/null mounted
# over it) in a mount namespace of the programs' own, with no
# LD_LIBRARY_PATH, where the machine lets one be made; in any case the
# dynamic loader's log (LD_DEBUG=libs) must show no CUDA library
# initialised.
cuda_libraries='lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|curand|cufft|cusparse|nvrtc|nvJitLink|nccl)\.so'
mapfile -t cuda_files < <(ldconfig -p | awk '{print $NF}' |
  grep -E "/$cuda_libraries" | xargs -r readlink -f | sort -u)
without_cuda() {
  unshare -rm bash -c '
    for file in "${@:2:$1}"; do mount --bind /dev/null "$file" || exit 97; done
    shift $(($1 + 1))
    exec env -u LD_LIBRARY_PATH "$@"' _ "${#cuda_files[@]}" "${cuda_files[@]}" "$@"
}
hidden=false
if without_cuda true 2>/dev/null; then
  hidden=true
  if ((${#cuda_files[@]} > 0)) && without_cuda cat "${cuda_files[0]}" | grep -q .; then
    fail "${cuda_files[0]} is still readable where it should be hidden"
  fi
fi
for program in mlp_c build/mlp_cxx; do
  rm -f "$work"/ld.*
  if $hidden; then
    out=$(without_cuda LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld" \
      "$work/$program" "${args[@]}") || fail "$program without CUDA failed"
  else
    out=$(LD_DEBUG=libs LD_DEBUG_OUTPUT="$work/ld" "$work/$program" "${args[@]}") ||
      fail "$program failed"
  fi
  if $hidden; then
    check "$program, ${#cuda_files[@]} CUDA libraries hidden, none loaded" "$out"
  else
    check "$program, none of the CUDA libraries loaded (no mount namespace to hide them)" "$out"
  fi
  if grep -h -E "calling init: .*/$cuda_libraries" "$work"/ld.*; then
    fail "$program loaded a CUDA library"
  fi
  grep -q -h 'calling init: .*/libscopeflow_cpu.so' "$work"/ld.* ||
    fail "$program: the dynamic loader's log does not show the CPU engine"
done

out=$(SCOPEFLOW_ENGINE=$fallback "$work/mlp_c" "${args[@]}") ||
  fail "mlp_c with a CUDA engine that does not load failed"
check "mlp_c (a CUDA engine that does not load first)" "$out"
cat "$work/expected.out"
echo PASS
