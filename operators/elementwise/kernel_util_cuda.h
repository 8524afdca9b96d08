// Device code shared by the elementwise kernels (the .cu files of this
// directory; nvcc only): vector packs, index arithmetic over broadcast
// shapes, and the math functions by element type.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_KERNEL_UTIL_CUDA_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_KERNEL_UTIL_CUDA_H_

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "operators/elementwise/elementwise_cuda.h"

namespace scopeflow {
namespace cuda {

// V elements loaded or stored with one instruction (up to 16 bytes).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// The elements per pack for the widest of the types: 16 bytes of it.
template <typename... Ts>
constexpr int PackSize() {
  constexpr size_t widest = std::max({sizeof(Ts)...});
  return static_cast<int>(16 / widest);
}

// Whether every pointer is aligned for packs of V elements of its type.
template <int V, typename... Ts>
bool PacksAligned(const Ts*... pointers) {
  return ((reinterpret_cast<uintptr_t>(pointers) % (sizeof(Ts) * V) == 0) &&
          ...);
}

// The first element after a grid's whole packs (n / V packs) and the thread
// for the leftover elements, handled one each.
#define SF_CUDA_TAIL_LOOP(i, begin, n)                                       \
  for (int64_t i = (begin) + blockIdx.x * int64_t{blockDim.x} + threadIdx.x; \
       i < (n); i += int64_t{blockDim.x} * gridDim.x)

// Division by a divisor fixed at launch (host code too, for checks of the
// index arithmetic without a device). With 32-bit indices (every index
// below 2^31) it is a multiply-high and a shift (Granlund and Montgomery):
// 64-bit division takes dozens of instructions.
template <typename IndexT>
struct Divisor;

template <>
struct Divisor<uint32_t> {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;

  Divisor() = default;
  // 1 <= d < 2^31.
  explicit Divisor(uint32_t d) : divisor(d) {
    while (shift < 31 && (uint32_t{1} << shift) < d) ++shift;
    const uint64_t one = 1;
    magic = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  // n < 2^31, so that the sum does not overflow.
  __host__ __device__ uint32_t Div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(n, magic);
#else
    const uint32_t high = static_cast<uint32_t>((uint64_t{n} * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

template <>
struct Divisor<int64_t> {
  int64_t divisor = 1;

  Divisor() = default;
  explicit Divisor(int64_t d) : divisor(d) {}
  __host__ __device__ int64_t Div(int64_t n) const { return n / divisor; }
};

// #pragma unroll in functions of both passes: host compilers warn about it.
#ifdef __CUDA_ARCH__
#define SF_CUDA_UNROLL _Pragma("unroll")
#else
#define SF_CUDA_UNROLL
#endif

// Maps a linear index over `rank` row-major dimensions to the offsets of N
// operands, which step by strides[k][d] along dimension d. Rank 0 maps
// index 0 to offsets 0.
template <int N, typename IndexT>
struct Offsets {
  int rank = 0;
  Divisor<IndexT> dims[kMaxBroadcastRank];
  IndexT strides[N][kMaxBroadcastRank] = {};

  __host__ __device__ void Get(IndexT linear, IndexT (&offsets)[N]) const {
    SF_CUDA_UNROLL
    for (int k = 0; k < N; ++k) offsets[k] = 0;
    // Constant indices after unrolling keep the arrays out of local memory.
    SF_CUDA_UNROLL
    for (int d = kMaxBroadcastRank - 1; d >= 1; --d) {
      if (d < rank) {
        const IndexT q = dims[d].Div(linear);
        const IndexT coordinate = linear - q * dims[d].divisor;
        linear = q;
        SF_CUDA_UNROLL
        for (int k = 0; k < N; ++k) offsets[k] += coordinate * strides[k][d];
      }
    }
    SF_CUDA_UNROLL
    for (int k = 0; k < N; ++k) offsets[k] += linear * strides[k][0];
  }
};

// Offsets over the dimensions `dims` of `rank` (each >= 1), the operands'
// strides given per operand by `strides[k]`.
template <int N, typename IndexT>
Offsets<N, IndexT> MakeOffsets(int rank, const int64_t* dims,
                               const int64_t* const* strides) {
  Offsets<N, IndexT> result;
  result.rank = rank;
  for (int d = 0; d < rank; ++d) {
    result.dims[d] = Divisor<IndexT>(static_cast<IndexT>(dims[d]));
    for (int k = 0; k < N; ++k) {
      result.strides[k][d] = static_cast<IndexT>(strides[k][d]);
    }
  }
  return result;
}

// Offsets of the first N operands of `shape`.
template <int N, typename IndexT>
Offsets<N, IndexT> MakeOffsets(const BroadcastShape& shape) {
  const int64_t* strides[N];
  for (int k = 0; k < N; ++k) strides[k] = shape.strides[k];
  return MakeOffsets<N, IndexT>(shape.rank, shape.dims, strides);
}

// Whether indices of n elements fit the 32-bit fast path.
inline bool FitsInt32(int64_t n) { return n <= INT32_MAX; }

// The math library by type: float calls the float functions (std::exp on
// a float is expf on the CPU too), double the double ones.
__device__ inline float Exp(float v) { return expf(v); }
__device__ inline double Exp(double v) { return exp(v); }
__device__ inline float Log(float v) { return logf(v); }
__device__ inline double Log(double v) { return log(v); }
__device__ inline float Sqrt(float v) { return sqrtf(v); }
__device__ inline double Sqrt(double v) { return sqrt(v); }
__device__ inline float Erf(float v) { return erff(v); }
__device__ inline double Erf(double v) { return erf(v); }
__device__ inline float Sin(float v) { return sinf(v); }
__device__ inline double Sin(double v) { return sin(v); }
__device__ inline float Cos(float v) { return cosf(v); }
__device__ inline double Cos(double v) { return cos(v); }
__device__ inline float Pow(float a, float b) { return powf(a, b); }
__device__ inline double Pow(double a, double b) { return pow(a, b); }

// Integer arithmetic that wraps around (two's complement), as
// elementwise::Add, Sub, Mul and Neg do on the CPU.
template <typename T>
__device__ T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
__device__ T WrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
__device__ T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename T>
__device__ T WrapNeg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U{0} - static_cast<U>(a));
}

// Whether max(x, y) is y, as MaxTakesY in binary.cc: a NaN in y propagates,
// x wins ties (and a NaN in x, which no comparison selects against, stays).
// max and max_grad both decide by it.
template <typename T>
__device__ bool MaxTakesY(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return x < y || y != y;
  } else {
    return x < y;
  }
}

// Whether min(x, y) is y, likewise.
template <typename T>
__device__ bool MinTakesY(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return y < x || y != y;
  } else {
    return y < x;
  }
}

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_KERNEL_UTIL_CUDA_H_
