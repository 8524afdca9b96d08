// Gradients of the reductions, with the semantics of reduce.cc: each
// element of X finds its output through the coalesced runs of X's axes,
// with 32-bit index arithmetic where X is small enough for it.
#include <cstdint>

#include "operators/reduction/reduce_grad_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// ReduceRuns for the device: the output stride of each run, 0 for a
// reduced one.
struct RunMap {
  int count = 0;
  int64_t sizes[kMaxGradRuns];
  int64_t out_strides[kMaxGradRuns];
};

// Also sets *numel to the number of elements. No runs is one element.
RunMap MapOf(const ReduceRuns& runs, int64_t* numel) {
  RunMap map;
  *numel = 1;
  if (runs.sizes.empty()) {
    map.count = 1;
    map.sizes[0] = 1;
    map.out_strides[0] = 0;
    return map;
  }
  map.count = static_cast<int>(runs.sizes.size());
  int64_t stride = 1;
  for (int r = map.count - 1; r >= 0; --r) {
    map.sizes[r] = runs.sizes[r];
    map.out_strides[r] = runs.reduced[r] ? 0 : stride;
    if (!runs.reduced[r]) stride *= runs.sizes[r];
    *numel *= runs.sizes[r];
  }
  return map;
}

// The output index of element i: one division for the innermost run and
// two per run between it and the outermost.
template <typename Index>
__device__ Index OutputOf(const RunMap& map, Index i) {
  const int last = map.count - 1;
  const Index inner = static_cast<Index>(map.sizes[last]);
  Index q = i / inner;
  Index o = map.out_strides[last] != 0 ? i - q * inner : 0;
  for (int r = last - 1; r > 0; --r) {
    const Index size = static_cast<Index>(map.sizes[r]);
    const Index next = q / size;
    o += (q - next * size) * static_cast<Index>(map.out_strides[r]);
    q = next;
  }
  if (last > 0) o += q * static_cast<Index>(map.out_strides[0]);
  return o;
}

#define SF_INDEX_LOOP(i, n)                                             \
  for (Index i = Index{blockIdx.x} * blockDim.x + threadIdx.x; i < (n); \
       i += Index{blockDim.x} * gridDim.x)

template <typename T, typename Index>
__global__ void SpreadKernel(RunMap map, const T* g, T scale, T* dx, Index n) {
  SF_INDEX_LOOP(i, n) { dx[i] = scale * g[OutputOf(map, i)]; }
}

// first[o] = the smallest index of an element of output o equal to its
// maximum.
template <typename T, typename Index>
__global__ void FirstMaxKernel(RunMap map, const T* x, const T* max,
                               unsigned long long* first, Index n) {
  SF_INDEX_LOOP(i, n) {
    const Index o = OutputOf(map, i);
    const T v = x[i];
    const T m = max[o];
    if (v == m || (v != v && m != m)) {
      atomicMin(first + o, static_cast<unsigned long long>(i));
    }
  }
}

constexpr unsigned long long kNone = ~0ull;

template <typename T>
__global__ void ScatterKernel(const unsigned long long* first, const T* g,
                              T* dx, int64_t outputs) {
  SF_CUDA_GRID_LOOP(o, outputs) {
    if (first[o] != kNone) dx[first[o]] = g[o];
  }
}

template <typename T>
__global__ void MeanGradKernel(const T* g, T* dx, int64_t n) {
  const T value =
      static_cast<T>(static_cast<double>(*g) / static_cast<double>(n));
  SF_CUDA_GRID_LOOP(i, n) { dx[i] = value; }
}

// Whether 32-bit indices (and the grid-stride steps past n) hold n.
bool Fits32(int64_t n) { return n <= INT32_MAX; }

}  // namespace

template <typename T>
void LaunchReduceSpread(const ReduceRuns& runs, const T* g, T scale, T* dx,
                        cudaStream_t stream) {
  int64_t n = 0;
  const RunMap map = MapOf(runs, &n);
  if (n == 0) return;
  if (Fits32(n)) {
    SpreadKernel<T, uint32_t><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        map, g, scale, dx, static_cast<uint32_t>(n));
  } else {
    SpreadKernel<T, uint64_t><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        map, g, scale, dx, static_cast<uint64_t>(n));
  }
}

size_t ReduceMaxGradWorkspaceBytes(int64_t outputs) {
  return static_cast<size_t>(outputs) * sizeof(unsigned long long);
}

template <typename T>
cudaError_t LaunchReduceMaxGrad(const ReduceRuns& runs, const T* x,
                                const T* max, const T* g, T* dx,
                                int64_t outputs, void* workspace,
                                cudaStream_t stream) {
  int64_t n = 0;
  const RunMap map = MapOf(runs, &n);
  if (n == 0) return cudaSuccess;
  cudaError_t error = cudaMemsetAsync(dx, 0, n * sizeof(T), stream);
  if (error != cudaSuccess || outputs == 0) return error;
  auto* first = static_cast<unsigned long long*>(workspace);
  // All bits set: kNone.
  error = cudaMemsetAsync(first, 0xff, ReduceMaxGradWorkspaceBytes(outputs),
                          stream);
  if (error != cudaSuccess) return error;
  if (Fits32(n)) {
    FirstMaxKernel<T, uint32_t><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        map, x, max, first, static_cast<uint32_t>(n));
  } else {
    FirstMaxKernel<T, uint64_t><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        map, x, max, first, static_cast<uint64_t>(n));
  }
  ScatterKernel<T>
      <<<CudaBlocks(outputs), kCudaThreads, 0, stream>>>(first, g, dx, outputs);
  return cudaSuccess;
}

template <typename T>
void LaunchMeanGrad(const T* g, T* dx, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  MeanGradKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(g, dx, n);
}

#define SF_INSTANTIATE_REDUCE_GRAD(T)                                          \
  template void LaunchReduceSpread<T>(const ReduceRuns&, const T*, T, T*,      \
                                      cudaStream_t);                           \
  template cudaError_t LaunchReduceMaxGrad<T>(const ReduceRuns&, const T*,     \
                                              const T*, const T*, T*, int64_t, \
                                              void*, cudaStream_t);            \
  template void LaunchMeanGrad<T>(const T*, T*, int64_t, cudaStream_t)

SF_INSTANTIATE_REDUCE_GRAD(float);
SF_INSTANTIATE_REDUCE_GRAD(double);

#undef SF_INSTANTIATE_REDUCE_GRAD

}  // namespace cuda
}  // namespace scopeflow
