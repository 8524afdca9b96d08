#!/usr/bin/env bash
# Builds scopeflow for embedding and installs it under a prefix:
#   PREFIX/lib/libscopeflow.so[.0[.VERSION]]  the library programs link: a
#                                             loader of the C API's engines
#   PREFIX/lib/scopeflow/libscopeflow_cpu.so  the engine without CUDA: the C
#                                             API and every operator
#   PREFIX/lib/scopeflow/libscopeflow_cuda.so the engine with CUDA (--cuda)
#   PREFIX/include/scopeflow_c_api.h          the C API
#   PREFIX/include/scopeflow_cxx.h            its header-only C++ wrapper
#   PREFIX/lib/pkgconfig/scopeflow.pc         pkg-config --cflags --libs scopeflow
#   PREFIX/lib/cmake/scopeflow/               find_package(scopeflow), target
#                                             scopeflow::scopeflow
#   PREFIX/bin/scopeflow                      the command
#   PREFIX/lib/python3/dist-packages/scopeflow the Python module
#
# Everything comes from one build. By default that is --config=cpu_only:
# nothing needs a CUDA library, so it runs on any x86-64 Linux machine with
# the Debian libraries of tools/setup.sh (Abseil, protobuf, oneDNN). With
# --cuda it is the build with GPU code (a CUDA toolkit is needed to build
# it, and it is the build `bazel test //...` makes): the CUDA engine is
# installed too; the CPU engine is that build's objects less the GPU code
# (c_api/cpu_shared_library.bzl), so it still needs no CUDA library, while
# the command and the Python module then need the CUDA libraries. The
# loader uses the CUDA engine where the NVIDIA driver sees a device and the
# engine's CUDA libraries load, and the CPU engine elsewhere (see
# sf_engine_name in scopeflow_c_api.h).
#
# Usage: tools/install.sh --prefix DIR [--cuda] [--bazel_flag=FLAG ...]
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=
bazel_flags=()
cuda=false
while (($# > 0)); do
  case $1 in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --cuda) cuda=true; shift ;;
    --bazel_flag=*) bazel_flags+=("${1#--bazel_flag=}"); shift ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $prefix ]] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

version=$(sed -n 's/.*kLibraryVersion\[\] = "\(.*\)";/\1/p' c_api/version.h)
[[ $version =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] ||
  { echo "install.sh: no version in c_api/version.h" >&2; exit 1; }
major=${BASH_REMATCH[1]}
minor=${BASH_REMATCH[2]}

config=(--config=cpu_only)
$cuda && config=()
targets=(//c_api:libscopeflow.so //c_api:cpu_engine //tools:scopeflow)
$cuda && targets+=(//c_api:libscopeflow_engine.so)

# The files a target built, as paths relative to the workspace.
outputs_of() {
  bazel cquery "${config[@]}" "${bazel_flags[@]}" --output=starlark \
    --starlark:expr='"\n".join([f.path for f in target.files.to_list()])' \
    "$1" 2>/dev/null
}

bazel build "${config[@]}" "${bazel_flags[@]}" "${targets[@]}"
install -d "$prefix/lib/scopeflow" "$prefix/include" "$prefix/bin" \
  "$prefix/lib/pkgconfig" "$prefix/lib/cmake/scopeflow"
install -m 0755 "$(outputs_of //c_api:cpu_engine)" \
  "$prefix/lib/scopeflow/libscopeflow_cpu.so"
install -m 0755 "$(outputs_of //c_api:libscopeflow.so)" \
  "$prefix/lib/libscopeflow.so.$version"
ln -sfn "libscopeflow.so.$version" "$prefix/lib/libscopeflow.so.$major"
ln -sfn "libscopeflow.so.$major" "$prefix/lib/libscopeflow.so"
install -m 0644 c_api/scopeflow_c_api.h c_api/scopeflow_cxx.h "$prefix/include"
install -m 0755 "$(outputs_of //tools:scopeflow)" "$prefix/bin/scopeflow"
if $cuda; then
  # Where no CUDA toolkit was found the build has no GPU code: no CUDA engine.
  if grep -q 'HAS_CUDA = True' \
    "$(bazel info "${bazel_flags[@]}" output_base)/external/local_cuda/defs.bzl"; then
    install -m 0755 "$(outputs_of //c_api:libscopeflow_engine.so)" \
      "$prefix/lib/scopeflow/libscopeflow_cuda.so"
  else
    echo "install.sh: no CUDA toolkit was found: no CUDA engine" >&2
    rm -f "$prefix/lib/scopeflow/libscopeflow_cuda.so"
  fi
fi

fill() {
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" \
    -e "s|@SOVERSION@|$major|g" -e "s|@MAJOR@|$major|g" -e "s|@MINOR@|$minor|g" \
    "$1" >"$2"
}
fill c_api/install/scopeflow.pc.in "$prefix/lib/pkgconfig/scopeflow.pc"
fill c_api/install/scopeflowConfig.cmake.in \
  "$prefix/lib/cmake/scopeflow/scopeflowConfig.cmake"
fill c_api/install/scopeflowConfigVersion.cmake.in \
  "$prefix/lib/cmake/scopeflow/scopeflowConfigVersion.cmake"

# The Python module, in PREFIX/lib/python3/dist-packages/scopeflow (put
# that directory's parent on PYTHONPATH unless PREFIX is /usr or /usr/local).
bash python/install_python.sh "$prefix" "${config[@]}" "${bazel_flags[@]}"

echo "installed scopeflow $version under $prefix"
