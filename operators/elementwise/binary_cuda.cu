// The binary arithmetic ops on the device: add, sub, mul, div, pow, max,
// min, with binary.cc's semantics element for element.
#include <cstdint>
#include <type_traits>

#include "operators/elementwise/broadcast_kernels_cuda.h"
#include "operators/elementwise/elementwise_cuda.h"
#include "operators/elementwise/kernel_util_cuda.h"

namespace scopeflow {
namespace cuda {
namespace {

struct AddFn {
  template <typename T>
  __device__ T operator()(T a, T b, int64_t) const {
    if constexpr (std::is_integral_v<T>) {
      return WrapAdd(a, b);
    } else {
      return a + b;
    }
  }
};

struct SubFn {
  template <typename T>
  __device__ T operator()(T a, T b, int64_t) const {
    if constexpr (std::is_integral_v<T>) {
      return WrapSub(a, b);
    } else {
      return a - b;
    }
  }
};

struct MulFn {
  template <typename T>
  __device__ T operator()(T a, T b, int64_t) const {
    if constexpr (std::is_integral_v<T>) {
      return WrapMul(a, b);
    } else {
      return a * b;
    }
  }
};

// Integer division truncates; a zero divisor is reported (the op fails, so
// the 0 written is never seen), and the lowest value divided by -1 wraps.
struct DivFn {
  unsigned long long* error;

  template <typename T>
  __device__ T operator()(T a, T b, int64_t b_index) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) {
        atomicMin(error, static_cast<unsigned long long>(b_index));
        return 0;
      }
      if (b == -1) return WrapNeg(a);
      return a / b;
    } else {
      return a / b;
    }
  }
};

// Integer powers exactly, by repeated squaring with wrapping products; a
// negative exponent gives 1 / x^-y truncated toward zero, and 0 to a
// negative power is reported.
struct PowFn {
  unsigned long long* error;

  template <typename T>
  __device__ T operator()(T x, T y, int64_t b_index) const {
    if constexpr (std::is_integral_v<T>) {
      if (y < 0) {
        if (x == 1) return 1;
        if (x == -1) return (y & 1) != 0 ? -1 : 1;
        if (x == 0) atomicMin(error, static_cast<unsigned long long>(b_index));
        return 0;
      }
      T result = 1;
      for (T base = x; y > 0; y >>= 1) {
        if ((y & 1) != 0) result = WrapMul(result, base);
        if (y > 1) base = WrapMul(base, base);
      }
      return result;
    } else {
      return Pow(x, y);
    }
  }
};

struct MaxFn {
  template <typename T>
  __device__ T operator()(T a, T b, int64_t) const {
    return MaxTakesY(a, b) ? b : a;
  }
};

struct MinFn {
  template <typename T>
  __device__ T operator()(T a, T b, int64_t) const {
    return MinTakesY(a, b) ? b : a;
  }
};

}  // namespace

template <typename T>
void LaunchBinary(BinaryOp op, const T* x, const T* y, T* out, int64_t n,
                  const BroadcastShape& shape, unsigned long long* error,
                  cudaStream_t stream) {
  switch (op) {
    case BinaryOp::kAdd:
      return LaunchBroadcast2(AddFn(), x, y, out, n, shape, stream);
    case BinaryOp::kSub:
      return LaunchBroadcast2(SubFn(), x, y, out, n, shape, stream);
    case BinaryOp::kMul:
      return LaunchBroadcast2(MulFn(), x, y, out, n, shape, stream);
    case BinaryOp::kDiv:
      return LaunchBroadcast2(DivFn{error}, x, y, out, n, shape, stream);
    case BinaryOp::kPow:
      return LaunchBroadcast2(PowFn{error}, x, y, out, n, shape, stream);
    case BinaryOp::kMax:
      return LaunchBroadcast2(MaxFn(), x, y, out, n, shape, stream);
    case BinaryOp::kMin:
      return LaunchBroadcast2(MinFn(), x, y, out, n, shape, stream);
  }
}

namespace {

__global__ void ReportRejectedKernel(const unsigned long long* error,
                                     int64_t* report) {
  if (*error != ~0ull) *report = static_cast<int64_t>(*error);
}

}  // namespace

void LaunchReportRejected(const unsigned long long* error, int64_t* report,
                          cudaStream_t stream) {
  ReportRejectedKernel<<<1, 1, 0, stream>>>(error, report);
}

#define SF_INSTANTIATE_BINARY(T)                                            \
  template void LaunchBinary<T>(BinaryOp, const T*, const T*, T*, int64_t,  \
                                const BroadcastShape&, unsigned long long*, \
                                cudaStream_t)

SF_INSTANTIATE_BINARY(float);
SF_INSTANTIATE_BINARY(double);
SF_INSTANTIATE_BINARY(int32_t);
SF_INSTANTIATE_BINARY(int64_t);

#undef SF_INSTANTIATE_BINARY

}  // namespace cuda
}  // namespace scopeflow
