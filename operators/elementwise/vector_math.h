// Float32 math functions written for GCC's vectorizer: branch-free
// polynomials and selects, integer work only on the bits of floats, so that
// a loop calling them inside an SF_WIDEST_VECTORS function
// (platform/vector_clones.h) runs 16 lanes at a time on AVX-512 instead of
// one libm call per element.
//
// Each handles the whole float range as libm does: +-0, denormal inputs
// and results, +-inf and NaN. Largest errors against double libm over
// every 251st float bit pattern (vector_math_test.cc asserts bounds a
// little above them): Exp 1.0 ulp, Log 0.8, Tanh 1.3, Sigmoid 2.3,
// Log1p 2.4, Expm1 2.4, Erf 2.4, Softplus 2.7, NormalCdf 4.8.
//
// The polynomials are Chebyshev fits (tools/vector_math_fit.py prints
// them with their errors). Everything is plain C++ (no FMA needed): with
// -ffp-contract=off each clone rounds as the baseline does, so the results
// do not depend on the CPU.
//
// Compile users with -fno-trapping-math: otherwise GCC may not turn the
// selects into vector blends on AVX2 and SSE2 (a select whose arm GCC has
// specialised, e.g. on a clamped argument, holds float operations that
// might raise a floating-point exception, which it will not speculate),
// and the loop stays scalar. The results do not change: nothing here
// reads the exception flags.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_VECTOR_MATH_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_VECTOR_MATH_H_

#include <cstdint>
#include <limits>

#define SF_VMATH_INLINE inline __attribute__((always_inline))

namespace scopeflow {
namespace vmath {

SF_VMATH_INLINE int32_t BitsOf(float x) {
  return __builtin_bit_cast(int32_t, x);
}

SF_VMATH_INLINE float FloatOf(int32_t bits) {
  return __builtin_bit_cast(float, bits);
}

SF_VMATH_INLINE float Abs(float x) { return FloatOf(BitsOf(x) & 0x7fffffff); }

// |magnitude| with the sign of `sign`.
SF_VMATH_INLINE float CopySign(float magnitude, float sign) {
  return FloatOf((BitsOf(magnitude) & 0x7fffffff) |
                 (BitsOf(sign) & static_cast<int32_t>(0x80000000u)));
}

// c0 x^n + c1 x^(n-1) + ... + cn, by Horner's rule, unrolled by the
// recursion (a loop here would be an inner loop, which stops the
// vectorizer).
SF_VMATH_INLINE float Poly(float, float c0) { return c0; }

template <typename... Rest>
SF_VMATH_INLINE float Poly(float x, float c0, float c1, Rest... rest) {
  return Poly(x, c0 * x + c1, rest...);
}

// 2^n for -126 <= n <= 127, from the exponent bits.
SF_VMATH_INLINE float TwoTo(int32_t n) { return FloatOf((n + 127) << 23); }

// e^(hi + lo) for |lo| below about 1: lo carries bits that hi + lo would
// round away (NormalCdf's -x^2 / 2). e^x is 2^n e^r with n the nearest
// integer to x / ln 2 and |r| <= ln 2 / 2; ln 2 is split (Cody and Waite)
// so that hi - n ln2_hi is exact.
SF_VMATH_INLINE float ExpOfSum(float hi, float lo) {
  // Beyond these e^x overflows or rounds to 0 whatever r is; NaN passes.
  hi = hi > 89.0f ? 89.0f : hi;
  hi = hi < -104.0f ? -104.0f : hi;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // 9 bits: n * kLn2Hi is exact.
  constexpr float kLn2Lo = -2.12194440e-4f;
  // Adding 1.5 * 2^23 rounds to an integer, which lands in the low bits.
  constexpr float kRound = 12582912.0f;
  const float shifted = (hi + lo) * kLog2e + kRound;
  const float n = shifted - kRound;
  const int32_t ni = BitsOf(shifted) - BitsOf(kRound);
  const float r = ((hi - n * kLn2Hi) + lo) - n * kLn2Lo;
  // e^r = 1 + r + r^2 q(r).
  const float p = 1.0f + (r + r * r *
                                  Poly(r, 1.392691806e-03f, 8.363767023e-03f,
                                       4.166655016e-02f, 1.666657342e-01f,
                                       5.000000000e-01f));
  // -150 <= n <= 128: two factors, each a normal float, so that results
  // that are denormal (or overflow) round once, in the last product.
  const int32_t n1 = ni >> 1;
  return p * TwoTo(n1) * TwoTo(ni - n1);
}

SF_VMATH_INLINE float Exp(float x) { return ExpOfSum(x, 0.0f); }

// Natural log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), and
// log(m) = f - f^2 / 2 + f^3 q(f) with f = m - 1, exact.
SF_VMATH_INLINE float Log(float x) {
  constexpr float kMinNormal = 1.17549435e-38f;
  const bool denormal = x < kMinNormal;
  // The selects pick constants, not products: a product under a condition
  // might trap (for all GCC knows), which stops if-conversion.
  const float scaled = x * (denormal ? 8388608.0f : 1.0f);  // 2^23
  const int32_t bits = BitsOf(scaled);
  int32_t e = ((bits >> 23) & 0xff) - 127 - (denormal ? 23 : 0);
  float m = FloatOf((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const bool high = m > 1.41421356f;
  m *= high ? 0.5f : 1.0f;
  e += high ? 1 : 0;
  const float f = m - 1.0f;
  const float z = f * f;
  const float fe = static_cast<float>(e);
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  const float y =
      f * z *
          Poly(f, 6.971611471e-02f, -1.147973385e-01f, 1.168541992e-01f,
               -1.242568733e-01f, 1.424905765e-01f, -1.666780232e-01f,
               2.000071575e-01f, -2.499999696e-01f, 3.333333118e-01f) +
      fe * kLn2Lo - 0.5f * z;
  float result = (f + y) + fe * kLn2Hi;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  result = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : result;
  result = x == 0.0f ? -kInf : result;
  return x < kInf ? result : x;  // +inf and NaN give themselves.
}

// log(1 + u) for u >= -1: log(w) u / (w - 1) with w = 1 + u rounded, whose
// errors cancel (Goldberg's trick), so small u keeps its digits.
SF_VMATH_INLINE float Log1p(float u) {
  const float w = 1.0f + u;
  const float d = w - 1.0f;
  const float result = d == 0.0f ? u : Log(w) * (u / d);
  return w < std::numeric_limits<float>::infinity() ? result : w;
}

// e^x - 1: (u - 1) x / log(u) with u = e^x rounded (Kahan's trick), so
// small x keeps its digits.
SF_VMATH_INLINE float Expm1(float x) {
  const float u = Exp(x);
  const float um1 = u - 1.0f;
  float result = um1 * (x / Log(u));
  result = u == 1.0f ? x : result;
  result = um1 == -1.0f ? -1.0f : result;
  return u < std::numeric_limits<float>::infinity() ? result : u;
}

// 1 / (1 + e^-x), as e^-|x| / (1 + e^-|x|) for negative x so that e^-x
// never overflows and tiny results keep their digits.
SF_VMATH_INLINE float Sigmoid(float x) {
  const float e = Exp(-Abs(x));
  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

// Below |x| = 0.625 an odd polynomial; above, 1 - 2 / (e^2|x| + 1) with the
// sign of x (0 and 1 at the ends).
SF_VMATH_INLINE float Tanh(float x) {
  const float ax = Abs(x);
  const float z = x * x;
  const float small =
      x + x * z *
              Poly(z, 2.292744816e-03f, -8.343945516e-03f, 2.176891865e-02f,
                   -5.395925958e-02f, 1.333330356e-01f, -3.333333317e-01f);
  const float large = 1.0f - 2.0f / (Exp(2.0f * ax) + 1.0f);
  return CopySign(ax < 0.625f ? small : large, x);  // -0 gives -0.
}

// Phi(-a) for a >= 0, the normal distribution's lower tail: Q(a) e^(-a^2/2)
// with Q fitted in t = 1 / (1 + a / 2). a^2 / 2 is split into an exact high
// part and a small rest, so that the exponential keeps its digits where
// a^2 is large.
SF_VMATH_INLINE float NormalTail(float a) {
  a = a > 15.0f ? 15.0f : a;  // Phi(-15) is 0 in float; NaN passes.
  const float t = 1.0f / (1.0f + 0.5f * a);
  // Q(a) / t in u = (t - 0.5625) / 0.4375, which spans [-1, 1].
  const float u = t * (1.0f / 0.4375f) - (0.5625f / 0.4375f);
  const float q =
      t * Poly(u, 7.403498849e-06f, -7.718101213e-06f, -3.915206629e-05f,
               1.035180916e-04f, -1.839007347e-05f, -5.238270354e-04f,
               1.304767413e-03f, 9.493814617e-04f, -1.205323457e-02f,
               5.783344236e-03f, 1.473879640e-01f, 3.571059443e-01f);
  // a_hi keeps 12 bits, so a_hi^2 / 2 is exact.
  const float a_hi = FloatOf(BitsOf(a) & static_cast<int32_t>(0xfffff000u));
  const float rest = (a - a_hi) * (a + a_hi);
  return q * ExpOfSum(-0.5f * (a_hi * a_hi), -0.5f * rest);
}

// erf(x) for |x| <= 1: x p(x^2).
SF_VMATH_INLINE float ErfNearZero(float x) {
  return x * Poly(x * x, 7.875875063e-05f, -8.016864287e-04f, 5.189087423e-03f,
                  -2.685421201e-02f, 1.128359472e-01f, -3.761262667e-01f,
                  1.128379166e+00f);
}

// Below |x| = 1, ErfNearZero; above, 1 - erfc(|x|) = 1 - 2 Phi(-sqrt(2) |x|)
// with the sign of x.
SF_VMATH_INLINE float Erf(float x) {
  float ax = Abs(x);
  const float small = ErfNearZero(x);
  ax = ax > 4.5f ? 4.5f : ax;  // erf is 1 in float from 3.92 on.
  const float large = 1.0f - 2.0f * NormalTail(1.41421356f * ax);
  return Abs(x) < 1.0f ? small : CopySign(large, x);
}

// Phi(x), the standard normal distribution function, with the lower tail
// accurate to its smallest values: Phi(-|x|) from NormalTail, and 1 minus
// it above 0, where the result is at least 1/2 and so keeps its digits.
SF_VMATH_INLINE float NormalCdf(float x) {
  const float tail = NormalTail(Abs(x));
  return x < 0.0f ? tail : 1.0f - tail;
}

// log(1 + e^x), as max(x, 0) + log1p(e^-|x|): never overflows, and tiny
// results for very negative x keep their digits.
SF_VMATH_INLINE float Softplus(float x) {
  return (x > 0.0f ? x : 0.0f) + Log1p(Exp(-Abs(x)));
}

}  // namespace vmath
}  // namespace scopeflow

#undef SF_VMATH_INLINE

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_VECTOR_MATH_H_
