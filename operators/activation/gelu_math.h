// The two forms of gelu on one value, shared by the gelu op
// (activation.cc) and the fc that fuses it (operators/matmul.cc), so that
// a fused gelu gives the values of the op it replaces. Float32 runs
// operators/elementwise/vector_math.h's kernels (vectorized where a loop
// on the widest vectors inlines them; users compile with the flags that
// header asks for); float64 calls libm.
#ifndef SCOPEFLOW_OPERATORS_ACTIVATION_GELU_MATH_H_
#define SCOPEFLOW_OPERATORS_ACTIVATION_GELU_MATH_H_

#include <cmath>

#include "operators/elementwise/vector_math.h"

namespace scopeflow {

#define SF_GELU_INLINE inline __attribute__((always_inline))

// x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), computed as x Phi(x) (float)
// or 0.5 x erfc(-x / sqrt(2)) (double), which keep their precision for
// negative x where 1 + erf(...) would cancel.
struct GeluErf {
  SF_GELU_INLINE float operator()(float v) const {
    return v * vmath::NormalCdf(v);
  }
  SF_GELU_INLINE double operator()(double v) const {
    return 0.5 * v * std::erfc(-v * 0.70710678118654752440);
  }
};

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), computed as
// x sigmoid(2 z) with z the tanh's argument (the same function, without the
// cancellation).
struct GeluTanh {
  template <typename T>
  SF_GELU_INLINE static T TwiceZ(T v) {
    constexpr T kSqrt2OverPi = T(0.79788456080286535588);
    return T(2) * kSqrt2OverPi * (v + T(0.044715) * v * v * v);
  }
  SF_GELU_INLINE float operator()(float v) const {
    return v * vmath::Sigmoid(TwiceZ(v));
  }
  SF_GELU_INLINE double operator()(double v) const {
    return v / (1.0 + std::exp(-TwiceZ(v)));
  }
};

#undef SF_GELU_INLINE

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACTIVATION_GELU_MATH_H_
