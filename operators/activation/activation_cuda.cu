// Elementwise activations and their gradients. Each functor computes what
// the CPU kernel in activation.cc computes, in the same order of operations;
// products that feed a sum go through Mul, which nvcc never fuses into an
// FMA, so that rounding matches the CPU where a sum cancels.
#include <cstdint>

#include "operators/activation/activation_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

__device__ inline float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return exp(x); }
__device__ inline float Expm1(float x) { return expm1f(x); }
__device__ inline double Expm1(double x) { return expm1(x); }
__device__ inline float Tanh(float x) { return tanhf(x); }
__device__ inline double Tanh(double x) { return tanh(x); }
__device__ inline float Erfc(float x) { return erfcf(x); }
__device__ inline double Erfc(double x) { return erfc(x); }

template <typename T>
struct Relu {
  __device__ T operator()(T v) const { return v < T(0) ? T(0) : v; }
  __device__ T operator()(T out, T g) const { return out > T(0) ? g : T(0); }
};

template <typename T>
struct LeakyRelu {
  T alpha;
  __device__ T operator()(T v) const {
    return (v < T(0) ? T(0) : v) + Mul(alpha, v < T(0) ? v : T(0));
  }
  __device__ T operator()(T x, T g) const {
    return g * (x < T(0) ? alpha : T(1));
  }
};

template <typename T>
struct Elu {
  T alpha;
  __device__ T operator()(T v) const { return v > T(0) ? v : alpha * Expm1(v); }
  // exp's argument is clamped to 0 so that the unused branch never
  // overflows.
  __device__ T operator()(T x, T g) const {
    const T below = g * alpha * Exp(x < T(0) ? x : T(0));
    return x > T(0) ? g : below;
  }
};

template <typename T>
struct Sigmoid {
  __device__ T operator()(T v) const { return T(1) / (T(1) + Exp(-v)); }
  __device__ T operator()(T out, T g) const { return g * out * (T(1) - out); }
};

template <typename T>
struct TanhFn {
  __device__ T operator()(T v) const { return Tanh(v); }
  __device__ T operator()(T out, T g) const {
    return g * (T(1) - Mul(out, out));
  }
};

// 0.5 x erfc(-x / sqrt(2)); the gradient Phi(x) + x phi(x).
template <typename T>
struct Gelu {
  static constexpr T kSqrtHalf = T(0.70710678118654752440);
  static constexpr T kInvSqrt2Pi = T(0.39894228040143267794);
  __device__ T operator()(T v) const {
    return T(0.5) * v * Erfc(-v * kSqrtHalf);
  }
  __device__ T operator()(T x, T g) const {
    const T cdf = T(0.5) * Erfc(-x * kSqrtHalf);
    const T pdf = kInvSqrt2Pi * Exp(T(-0.5) * x * x);
    return g * (cdf + Mul(x, pdf));
  }
};

// x / (1 + exp(-2 z)), z = sqrt(2 / pi) (x + 0.044715 x^3); the gradient
// s + 2 x s (1 - s) dz/dx with s = sigmoid(2 z).
template <typename T>
struct GeluTanh {
  static constexpr T kSqrt2OverPi = T(0.79788456080286535588);
  static constexpr T kCubic = T(0.044715);
  __device__ T operator()(T v) const {
    const T z = kSqrt2OverPi * (v + Mul(Mul(kCubic * v, v), v));
    return v / (T(1) + Exp(T(-2) * z));
  }
  __device__ T operator()(T x, T g) const {
    const T x2 = x * x;
    const T z = kSqrt2OverPi * (x + Mul(kCubic * x2, x));
    const T dz = kSqrt2OverPi * (T(1) + Mul(T(3) * kCubic, x2));
    const T s = T(1) / (T(1) + Exp(T(-2) * z));
    return g * (s + Mul(T(2) * x * s * (T(1) - s), dz));
  }
};

// 16 bytes of T, loaded and stored as one vector.
template <typename T>
struct alignas(16) Pack {
  static constexpr int kSize = 16 / sizeof(T);
  T v[kSize];
};

// out[i] = f(x[i]) over n elements; with kPacked (x and out 16-byte
// aligned), through Packs and then the tail of fewer than a Pack.
template <bool kPacked, typename T, typename F>
__global__ void MapKernel(F f, const T* x, T* out, int64_t n) {
  int64_t done = 0;
  if (kPacked) {
    constexpr int kSize = Pack<T>::kSize;
    const int64_t packs = n / kSize;
    const Pack<T>* in = reinterpret_cast<const Pack<T>*>(x);
    Pack<T>* to = reinterpret_cast<Pack<T>*>(out);
    SF_CUDA_GRID_LOOP(p, packs) {
      Pack<T> v = in[p];
#pragma unroll
      for (int j = 0; j < kSize; ++j) v.v[j] = f(v.v[j]);
      to[p] = v;
    }
    done = packs * kSize;
  }
  SF_CUDA_GRID_LOOP(i, n - done) { out[done + i] = f(x[done + i]); }
}

// dx[i] = f(v[i], g[i]), packed as MapKernel.
template <bool kPacked, typename T, typename F>
__global__ void MapGradKernel(F f, const T* v, const T* g, T* dx, int64_t n) {
  int64_t done = 0;
  if (kPacked) {
    constexpr int kSize = Pack<T>::kSize;
    const int64_t packs = n / kSize;
    const Pack<T>* v_in = reinterpret_cast<const Pack<T>*>(v);
    const Pack<T>* g_in = reinterpret_cast<const Pack<T>*>(g);
    Pack<T>* to = reinterpret_cast<Pack<T>*>(dx);
    SF_CUDA_GRID_LOOP(p, packs) {
      const Pack<T> a = v_in[p];
      Pack<T> b = g_in[p];
#pragma unroll
      for (int j = 0; j < kSize; ++j) b.v[j] = f(a.v[j], b.v[j]);
      to[p] = b;
    }
    done = packs * kSize;
  }
  SF_CUDA_GRID_LOOP(i, n - done) { dx[done + i] = f(v[done + i], g[done + i]); }
}

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls fn with the functor of `f`.
template <typename T, typename Fn>
void WithFunctor(Activation f, T alpha, Fn fn) {
  switch (f) {
    case Activation::kRelu:
      return fn(Relu<T>{});
    case Activation::kLeakyRelu:
      return fn(LeakyRelu<T>{alpha});
    case Activation::kElu:
      return fn(Elu<T>{alpha});
    case Activation::kSigmoid:
      return fn(Sigmoid<T>{});
    case Activation::kTanh:
      return fn(TanhFn<T>{});
    case Activation::kGelu:
      return fn(Gelu<T>{});
    case Activation::kGeluTanh:
      return fn(GeluTanh<T>{});
  }
}

}  // namespace

template <typename T>
void LaunchActivation(Activation f, T alpha, const T* x, T* out, int64_t n,
                      cudaStream_t stream) {
  if (n == 0) return;
  const bool packed = Aligned(x) && Aligned(out);
  const unsigned blocks = CudaBlocks(packed ? n / Pack<T>::kSize + 1 : n);
  WithFunctor(f, alpha, [&](auto functor) {
    if (packed) {
      MapKernel<true><<<blocks, kCudaThreads, 0, stream>>>(functor, x, out, n);
    } else {
      MapKernel<false><<<blocks, kCudaThreads, 0, stream>>>(functor, x, out, n);
    }
  });
}

template <typename T>
void LaunchActivationGrad(Activation f, T alpha, const T* value,
                          const T* out_grad, T* x_grad, int64_t n,
                          cudaStream_t stream) {
  if (n == 0) return;
  const bool packed = Aligned(value) && Aligned(out_grad) && Aligned(x_grad);
  const unsigned blocks = CudaBlocks(packed ? n / Pack<T>::kSize + 1 : n);
  WithFunctor(f, alpha, [&](auto functor) {
    if (packed) {
      MapGradKernel<true><<<blocks, kCudaThreads, 0, stream>>>(
          functor, value, out_grad, x_grad, n);
    } else {
      MapGradKernel<false><<<blocks, kCudaThreads, 0, stream>>>(
          functor, value, out_grad, x_grad, n);
    }
  });
}

template void LaunchActivation<float>(Activation, float, const float*, float*,
                                      int64_t, cudaStream_t);
template void LaunchActivation<double>(Activation, double, const double*,
                                       double*, int64_t, cudaStream_t);
template void LaunchActivationGrad<float>(Activation, float, const float*,
                                          const float*, float*, int64_t,
                                          cudaStream_t);
template void LaunchActivationGrad<double>(Activation, double, const double*,
                                           const double*, double*, int64_t,
                                           cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
