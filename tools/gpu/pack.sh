#!/usr/bin/env bash
# Builds what the GPU checks run (the CUDA tests, the scopeflow command, the
# net benchmarks) and packs it into .gpu_pack/pack.tar.gz, with the shared
# libraries it needs that a machine holding only a CUDA driver, cuBLAS and
# cuDNN may lack, and the digits data set for a training run. Then, on the
# machine with the GPU, in a copy of this repository with the pack:
#   bash tools/gpu/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //tests/gpu:cuda_ops_test //tools:scopeflow \
  //tests/benchmarks:net_benchmark
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/gpu_pack/bin" "$stage/gpu_pack/lib"
cp bazel-bin/tests/gpu/cuda_ops_test bazel-bin/tools/scopeflow \
  bazel-bin/tests/benchmarks/net_benchmark "$stage/gpu_pack/bin/"
# Every library the binaries load but the C runtime and CUDA's own, which
# the GPU machine has in versions that match its driver.
for binary in "$stage"/gpu_pack/bin/*; do ldd "$binary"; done |
  awk '/=> \// {print $3}' | sort -u |
  grep -v -E '/lib(c|m|dl|pthread|rt|stdc\+\+|gcc_s|cublas|cublasLt|cudnn[a-z_]*)\.so' |
  while read -r library; do cp -L "$library" "$stage/gpu_pack/lib/"; done
digits=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
if [[ -f "$digits" ]]; then cp "$digits" "$stage/gpu_pack/"; fi
mkdir -p .gpu_pack
tar -czf .gpu_pack/pack.tar.gz -C "$stage" gpu_pack
ls -la .gpu_pack/pack.tar.gz
