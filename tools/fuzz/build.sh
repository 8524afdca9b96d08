#!/usr/bin/env bash
# Builds a libFuzzer target, tools/fuzz/net_fuzzer (the default),
# onnx_fuzzer, npy_fuzzer or params_fuzzer, outside Bazel, with clang-14 and
# -fsanitize=fuzzer,address,undefined.
#
# Usage: tools/fuzz/build.sh
#   FUZZ_TARGET     net (the net loader and Prepare), net_run (those nets
#                   run on small random feeds), onnx (the ONNX
#                   importer, then Prepare), npy (the .npy reader) or params
#                   (parameter files and checkpoints); default net
#   FUZZ_BUILD_DIR  where objects and the binary go (default: a per-checkout
#                   folder under ${XDG_CACHE_HOME:-~/.cache}/scopeflow-fuzz)
#   FUZZ_JOBS       parallel compile jobs (default 2)
#   FUZZ_CXXFLAGS   extra compiler flags, e.g. -fno-sanitize=... to look
#                   past a known bug (use another FUZZ_BUILD_DIR for them)
# Prints the path of the fuzzer binary on its last line.
#
# The sources are found by globbing proto/, platform/, framework/ and
# operators/, so new files and ops are picked up without editing this script.
# Only what changed (per the compiler's dependency files) is recompiled.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/scopeflow-fuzz"
key="$(printf '%s' "$root" | sha1sum | cut -c1-12)"
build="${FUZZ_BUILD_DIR:-$cache/$key}"
jobs="${FUZZ_JOBS:-2}"
target="${FUZZ_TARGET:-net}"
# request_fuzzer.cc (the server's input) needs the server's sources, which
# this build does not compile: it runs under Bazel only (tools/fuzz/BUILD).
if [[ ! -f "$root/tools/fuzz/${target}_fuzzer.cc" || $target == request ]]; then
  echo "fuzz: no target \"$target\" (FUZZ_TARGET is net, net_run, onnx, npy or params)" >&2
  exit 2
fi

# --- Toolchain: Debian's clang-14 and libFuzzer. ---------------------------
packages=(clang-14 libfuzzer-14-dev)
missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null |
    grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "fuzz: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi

cxx=clang++-14
# Library code gets coverage instrumentation (fuzzer-no-link); the binary
# links libFuzzer's main. UB aborts so that libFuzzer records it as a crash.
# shellcheck disable=SC2054  # The commas belong to the flag.
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=all)
read -r -a extra_flags <<<"${FUZZ_CXXFLAGS:-}"
cxxflags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -Wno-unused-command-line-argument
  "${sanitize[@]}" -fsanitize=fuzzer-no-link
  -I"$root" -I"$build/gen" "${extra_flags[@]}")

# Every system library the Bazel build links (third_party/BUILD), less the
# test and benchmark ones.
mapfile -t libs < <(grep -o '"-l[A-Za-z0-9_]*"' "$root/third_party/BUILD" |
  tr -d '"' | grep -v -E '^-l(gtest|gmock|benchmark)' | awk '!seen[$0]++')

mkdir -p "$build/gen" "$build/obj"

# --- Generated protobuf C++ (system protoc, as third_party/proto.bzl). ------
protos=()
while IFS= read -r p; do protos+=("$p"); done < <(
  cd "$root" && find proto -name '*.proto' | sort)
for p in "${protos[@]}"; do
  out="$build/gen/${p%.proto}.pb.cc"
  if [[ ! -f $out || "$root/$p" -nt $out ]]; then
    echo "fuzz: protoc $p" >&2
    (cd "$root" && protoc --proto_path=. --cpp_out="$build/gen" "$p")
  fi
done

# --- The source list, derived from the tree. --------------------------------
# platform/: the CPU-only build, as //:cpu_only selects *_none.cc over
# *_cuda.cc. framework/: library sources, not the testonly helpers.
srcs=()
while IFS= read -r s; do srcs+=("$s"); done < <(
  cd "$root" && find platform framework operators -name '*.cc' \
    ! -name '*_test.cc' ! -name '*_benchmark.cc' ! -name '*_cuda.cc' \
    ! -name 'op_test_util.cc' ! -name 'grad_check.cc' | sort)
for p in "${protos[@]}"; do srcs+=("gen:${p%.proto}.pb.cc"); done
srcs+=("tools/fuzz/${target}_fuzzer.cc")

# --- Compile what is out of date. -------------------------------------------
# A flags change recompiles everything.
flags_stamp="$build/obj/flags"
if [[ ! -f $flags_stamp || "$(cat "$flags_stamp")" != "${cxxflags[*]}" ]]; then
  find "$build/obj" -name '*.o' -delete
  printf '%s' "${cxxflags[*]}" >"$flags_stamp"
fi

# Stale if the object is missing or older than any file its .d names.
stale() {
  local obj=$1 dep=${1%.o}.d f
  [[ -f $obj && -f $dep ]] || return 0
  while IFS= read -r f; do
    [[ -z $f ]] && continue
    [[ ! -e $f || $f -nt $obj ]] && return 0
  done < <(sed -e '1s/^[^:]*://' -e 's/\\$//' "$dep" | tr ' ' '\n')
  return 1
}

objs=()
todo=()
for s in "${srcs[@]}"; do
  if [[ $s == gen:* ]]; then
    src="$build/gen/${s#gen:}"
    obj="$build/obj/gen/${s#gen:}"
  else
    src="$root/$s"
    obj="$build/obj/$s"
  fi
  obj="${obj%.cc}.o"
  objs+=("$obj")
  if stale "$obj"; then todo+=("$src"$'\t'"$obj"); fi
done

# Runs in the xargs children: CXX, ROOT and CXXFLAGS come from there.
# shellcheck disable=SC2153
compile() {
  local src=${1%%$'\t'*} obj=${1#*$'\t'}
  mkdir -p "$(dirname "$obj")"
  echo "fuzz: compile ${src#"$ROOT"/}" >&2
  "$CXX" "${CXXFLAGS[@]}" -MMD -MF "${obj%.o}.d" -c "$src" -o "$obj.tmp" &&
    mv "$obj.tmp" "$obj"
}
if ((${#todo[@]} > 0)); then
  echo "fuzz: compiling ${#todo[@]} of ${#srcs[@]} sources with $jobs jobs" >&2
  export -f compile
  export CXX="$cxx" ROOT="$root"
  # Arrays do not export; pass the flags through a newline-separated string.
  export CXXFLAGS_LIST
  CXXFLAGS_LIST="$(printf '%s\n' "${cxxflags[@]}")"
  # shellcheck disable=SC2016  # Expanded by the child bash.
  printf '%s\0' "${todo[@]}" |
    xargs -0 -P "$jobs" -n 1 bash -c \
      'mapfile -t CXXFLAGS <<<"$CXXFLAGS_LIST"; compile "$1"' _
fi

# --- Link. ------------------------------------------------------------------
bin="$build/${target}_fuzzer"
relink=0
[[ -f $bin ]] || relink=1
for o in "${objs[@]}"; do [[ $o -nt $bin ]] && relink=1; done
# A deleted source leaves a stale object behind; only objs listed are linked.
if ((relink)); then
  echo "fuzz: link $bin" >&2
  "$cxx" "${sanitize[@]}" -fsanitize=fuzzer "${objs[@]}" -o "$bin.tmp" \
    "${libs[@]}" -lpthread
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
