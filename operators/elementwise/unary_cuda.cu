// The one-input ops on the device, with unary.cc's and cast.cc's semantics:
// the math functions, abs, neg, scale, clip, their gradients, and cast.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "operators/elementwise/convert.h"
#include "operators/elementwise/elementwise_cuda.h"
#include "operators/elementwise/kernel_util_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

// out[i] = op(x[i]), V elements per load.
template <typename In, typename Out, typename Op, int V>
__global__ void MapKernel(Op op, const In* x, Out* out, int64_t n) {
  const int64_t packs = n / V;
  SF_CUDA_GRID_LOOP(p, packs) {
    const Pack<In, V> a = reinterpret_cast<const Pack<In, V>*>(x)[p];
    Pack<Out, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op(a.v[j]);
    reinterpret_cast<Pack<Out, V>*>(out)[p] = r;
  }
  SF_CUDA_TAIL_LOOP(i, packs * V, n) { out[i] = op(x[i]); }
}

// out[i] = op(a[i], b[i]), V elements per load.
template <typename T, typename Op, int V>
__global__ void Map2Kernel(Op op, const T* a, const T* b, T* out, int64_t n) {
  const int64_t packs = n / V;
  SF_CUDA_GRID_LOOP(p, packs) {
    const Pack<T, V> as = reinterpret_cast<const Pack<T, V>*>(a)[p];
    const Pack<T, V> bs = reinterpret_cast<const Pack<T, V>*>(b)[p];
    Pack<T, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = op(as.v[j], bs.v[j]);
    reinterpret_cast<Pack<T, V>*>(out)[p] = r;
  }
  SF_CUDA_TAIL_LOOP(i, packs * V, n) { out[i] = op(a[i], b[i]); }
}

template <typename In, typename Out, typename Op>
void LaunchMap(Op op, const In* x, Out* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int V = PackSize<In, Out>();
  if (PacksAligned<V>(x, out)) {
    MapKernel<In, Out, Op, V>
        <<<CudaBlocks((n + V - 1) / V), kCudaThreads, 0, stream>>>(op, x, out,
                                                                   n);
  } else {
    MapKernel<In, Out, Op, 1>
        <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(op, x, out, n);
  }
}

template <typename T, typename Op>
void LaunchMap2(Op op, const T* a, const T* b, T* out, int64_t n,
                cudaStream_t stream) {
  if (n == 0) return;
  constexpr int V = PackSize<T>();
  if (PacksAligned<V>(a, b, out)) {
    Map2Kernel<T, Op, V>
        <<<CudaBlocks((n + V - 1) / V), kCudaThreads, 0, stream>>>(op, a, b,
                                                                   out, n);
  } else {
    Map2Kernel<T, Op, 1>
        <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(op, a, b, out, n);
  }
}

struct ExpFn {
  template <typename T>
  __device__ T operator()(T v) const {
    return Exp(v);
  }
};

struct LogFn {
  template <typename T>
  __device__ T operator()(T v) const {
    return Log(v);
  }
};

struct SqrtFn {
  template <typename T>
  __device__ T operator()(T v) const {
    return Sqrt(v);
  }
};

struct ErfFn {
  template <typename T>
  __device__ T operator()(T v) const {
    return Erf(v);
  }
};

struct SinFn {
  template <typename T>
  __device__ T operator()(T v) const {
    return Sin(v);
  }
};

struct CosFn {
  template <typename T>
  __device__ T operator()(T v) const {
    return Cos(v);
  }
};

__device__ inline float Fabs(float v) { return fabsf(v); }
__device__ inline double Fabs(double v) { return fabs(v); }

// Integers wrap around at the lowest value; floats clear the sign bit.
struct AbsFn {
  template <typename T>
  __device__ T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      return v < 0 ? WrapNeg(v) : v;
    } else {
      return Fabs(v);
    }
  }
};

struct NegFn {
  template <typename T>
  __device__ T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      return WrapNeg(v);
    } else {
      return -v;
    }
  }
};

// Each product and sum rounded on its own, as the CPU computes them: nvcc
// would otherwise fuse them into one multiply-add.
__device__ inline float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double MulRn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float AddRn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double AddRn(double a, double b) { return __dadd_rn(a, b); }

template <typename T>
struct ScaleFn {
  T scale;
  T bias;
  bool bias_after_scale;

  __device__ T operator()(T v) const {
    if constexpr (std::is_integral_v<T>) {
      return bias_after_scale ? WrapAdd(WrapMul(scale, v), bias)
                              : WrapMul(scale, WrapAdd(v, bias));
    } else {
      return bias_after_scale ? AddRn(MulRn(scale, v), bias)
                              : MulRn(scale, AddRn(v, bias));
    }
  }
};

// NaN stays NaN: no comparison with it holds.
template <typename T>
struct ClipFn {
  T lo;
  T hi;

  __device__ T operator()(T v) const { return v < lo ? lo : (hi < v ? hi : v); }
};

// The gradients: op(v, g) with v the element of X or Out the CPU kernel
// reads (unary.cc), g the gradient flowing into Out.
struct ExpGradFn {
  template <typename T>
  __device__ T operator()(T out, T g) const {
    return g * out;
  }
};

struct LogGradFn {
  template <typename T>
  __device__ T operator()(T x, T g) const {
    return g / x;
  }
};

struct SqrtGradFn {
  template <typename T>
  __device__ T operator()(T out, T g) const {
    return g / (T{2} * out);
  }
};

struct ErfGradFn {
  template <typename T>
  __device__ T operator()(T x, T g) const {
    constexpr T kTwoOverSqrtPi = static_cast<T>(1.12837916709551257390);
    return g * kTwoOverSqrtPi * Exp(-x * x);
  }
};

struct SinGradFn {
  template <typename T>
  __device__ T operator()(T x, T g) const {
    return g * Cos(x);
  }
};

struct CosGradFn {
  template <typename T>
  __device__ T operator()(T x, T g) const {
    return -g * Sin(x);
  }
};

// sign(x) * g, 0 at 0; NaN stays NaN.
struct AbsGradFn {
  template <typename T>
  __device__ T operator()(T x, T g) const {
    if (x > 0) return g;
    if (x < 0) return -g;
    return x == 0 ? T{0} : x;
  }
};

template <typename T>
struct ClipGradFn {
  T lo;
  T hi;

  // The negated comparisons of ClipFn, so that NaN passes as there.
  __device__ T operator()(T x, T g) const {
    return !(x < lo) && !(hi < x) ? g : T{0};
  }
};

// float16 as its bits.
struct Half {
  uint16_t bits;
};

// FloatToHalf (framework/float16.cc) bit for bit: nearest, ties to even;
// overflow to infinity; NaN keeps one payload bit.
__device__ uint16_t FloatToHalfBits(float value) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) {
    const uint32_t nan_bit = abs_bits > 0x7f800000u ? 0x0200u : 0;
    return static_cast<uint16_t>(sign | 0x7c00u | nan_bit);
  }
  if (abs_bits >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (abs_bits < 0x38800000u) {
    // The adder's own rounding places the subnormal half's bits.
    const float shifted = __fadd_rn(__uint_as_float(abs_bits), 0.5f);
    return static_cast<uint16_t>(sign |
                                 (__float_as_uint(shifted) - 0x3f000000u));
  }
  const uint32_t odd = (abs_bits >> 13) & 1u;
  const uint32_t rounded = abs_bits + 0xc8000fffu + odd;
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

// HalfToFloat bit for bit (exact).
__device__ float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) {
    return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    const float magnitude =
        __fmul_rn(static_cast<float>(mantissa), 5.9604644775390625e-8f);
    return sign ? -magnitude : magnitude;
  }
  return __uint_as_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Half on the device, for ConvertValue.
struct DeviceHalf {
  using Type = Half;
  __device__ static float ToFloat(Half v) { return HalfBitsToFloat(v.bits); }
  __device__ static Half FromFloat(float v) { return Half{FloatToHalfBits(v)}; }
};

// Convert of cast.cc (convert.h).
template <typename To, typename From>
__device__ To Convert(From v) {
  return elementwise::ConvertValue<To, From, DeviceHalf>(v);
}

template <typename To>
struct ConvertFn {
  template <typename From>
  __device__ To operator()(From v) const {
    return Convert<To>(v);
  }
};

template <typename From>
void CastFrom(const From* x, CastType to, void* out, int64_t n,
              cudaStream_t stream) {
  switch (to) {
    case CastType::kFloat32:
      return LaunchMap(ConvertFn<float>(), x, static_cast<float*>(out), n,
                       stream);
    case CastType::kFloat64:
      return LaunchMap(ConvertFn<double>(), x, static_cast<double*>(out), n,
                       stream);
    case CastType::kFloat16:
      return LaunchMap(ConvertFn<Half>(), x, static_cast<Half*>(out), n,
                       stream);
    case CastType::kInt32:
      return LaunchMap(ConvertFn<int32_t>(), x, static_cast<int32_t*>(out), n,
                       stream);
    case CastType::kInt64:
      return LaunchMap(ConvertFn<int64_t>(), x, static_cast<int64_t*>(out), n,
                       stream);
    case CastType::kUInt8:
      return LaunchMap(ConvertFn<uint8_t>(), x, static_cast<uint8_t*>(out), n,
                       stream);
    case CastType::kInt8:
      return LaunchMap(ConvertFn<int8_t>(), x, static_cast<int8_t*>(out), n,
                       stream);
    case CastType::kBool:
      return LaunchMap(ConvertFn<bool>(), x, static_cast<bool*>(out), n,
                       stream);
  }
}

}  // namespace

template <typename T>
void LaunchUnary(UnaryOp op, const T* x, T* out, int64_t n,
                 cudaStream_t stream) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::kExp:
        return LaunchMap(ExpFn(), x, out, n, stream);
      case UnaryOp::kLog:
        return LaunchMap(LogFn(), x, out, n, stream);
      case UnaryOp::kSqrt:
        return LaunchMap(SqrtFn(), x, out, n, stream);
      case UnaryOp::kErf:
        return LaunchMap(ErfFn(), x, out, n, stream);
      case UnaryOp::kSin:
        return LaunchMap(SinFn(), x, out, n, stream);
      case UnaryOp::kCos:
        return LaunchMap(CosFn(), x, out, n, stream);
      default:
        break;
    }
  }
  // The math functions have no integer kernels: only abs and neg do.
  switch (op) {
    case UnaryOp::kAbs:
      return LaunchMap(AbsFn(), x, out, n, stream);
    case UnaryOp::kNeg:
      return LaunchMap(NegFn(), x, out, n, stream);
    default:
      return;
  }
}

template <typename T>
void LaunchScale(const T* x, T* out, int64_t n, T scale, T bias,
                 bool bias_after_scale, cudaStream_t stream) {
  LaunchMap(ScaleFn<T>{scale, bias, bias_after_scale}, x, out, n, stream);
}

template <typename T>
void LaunchClip(const T* x, T* out, int64_t n, T lo, T hi,
                cudaStream_t stream) {
  LaunchMap(ClipFn<T>{lo, hi}, x, out, n, stream);
}

template <typename T>
void LaunchUnaryGrad(UnaryGradOp op, const T* value, const T* dout, T* dx,
                     int64_t n, cudaStream_t stream) {
  switch (op) {
    case UnaryGradOp::kExp:
      return LaunchMap2(ExpGradFn(), value, dout, dx, n, stream);
    case UnaryGradOp::kLog:
      return LaunchMap2(LogGradFn(), value, dout, dx, n, stream);
    case UnaryGradOp::kSqrt:
      return LaunchMap2(SqrtGradFn(), value, dout, dx, n, stream);
    case UnaryGradOp::kErf:
      return LaunchMap2(ErfGradFn(), value, dout, dx, n, stream);
    case UnaryGradOp::kSin:
      return LaunchMap2(SinGradFn(), value, dout, dx, n, stream);
    case UnaryGradOp::kCos:
      return LaunchMap2(CosGradFn(), value, dout, dx, n, stream);
    case UnaryGradOp::kAbs:
      return LaunchMap2(AbsGradFn(), value, dout, dx, n, stream);
  }
}

template <typename T>
void LaunchClipGrad(const T* x, const T* dout, T* dx, int64_t n, T lo, T hi,
                    cudaStream_t stream) {
  LaunchMap2(ClipGradFn<T>{lo, hi}, x, dout, dx, n, stream);
}

void LaunchCast(CastType from, const void* x, CastType to, void* out, int64_t n,
                cudaStream_t stream) {
  switch (from) {
    case CastType::kFloat32:
      return CastFrom(static_cast<const float*>(x), to, out, n, stream);
    case CastType::kFloat64:
      return CastFrom(static_cast<const double*>(x), to, out, n, stream);
    case CastType::kFloat16:
      return CastFrom(static_cast<const Half*>(x), to, out, n, stream);
    case CastType::kInt32:
      return CastFrom(static_cast<const int32_t*>(x), to, out, n, stream);
    case CastType::kInt64:
      return CastFrom(static_cast<const int64_t*>(x), to, out, n, stream);
    case CastType::kUInt8:
      return CastFrom(static_cast<const uint8_t*>(x), to, out, n, stream);
    case CastType::kInt8:
      return CastFrom(static_cast<const int8_t*>(x), to, out, n, stream);
    case CastType::kBool:
      return CastFrom(static_cast<const bool*>(x), to, out, n, stream);
  }
}

#define SF_INSTANTIATE_UNARY(T)                                               \
  template void LaunchUnary<T>(UnaryOp, const T*, T*, int64_t, cudaStream_t); \
  template void LaunchScale<T>(const T*, T*, int64_t, T, T, bool,             \
                               cudaStream_t);                                 \
  template void LaunchClip<T>(const T*, T*, int64_t, T, T, cudaStream_t)

SF_INSTANTIATE_UNARY(float);
SF_INSTANTIATE_UNARY(double);
SF_INSTANTIATE_UNARY(int32_t);
SF_INSTANTIATE_UNARY(int64_t);

#undef SF_INSTANTIATE_UNARY

#define SF_INSTANTIATE_UNARY_GRAD(T)                                     \
  template void LaunchUnaryGrad<T>(UnaryGradOp, const T*, const T*, T*,  \
                                   int64_t, cudaStream_t);               \
  template void LaunchClipGrad<T>(const T*, const T*, T*, int64_t, T, T, \
                                  cudaStream_t)

SF_INSTANTIATE_UNARY_GRAD(float);
SF_INSTANTIATE_UNARY_GRAD(double);

#undef SF_INSTANTIATE_UNARY_GRAD

}  // namespace cuda
}  // namespace scopeflow
