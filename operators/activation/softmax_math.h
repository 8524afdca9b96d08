// Loops over contiguous rows for softmax, log_softmax,
// softmax_with_cross_entropy and the gradients of the first two. They are
// numerically stable (a row is shifted by its maximum before exp, so no exp
// overflows) and written so that GCC vectorizes them at -O2 with
// -fvect-cost-model=dynamic (the copts of the libraries using them):
// - Reductions (max, sum) keep kBlock partial results and fold them at the
//   end: with a single accumulator the compiler may not reorder the float
//   operations, and the loop stays scalar.
// - exp of float is a polynomial (ExpOfClamped) rather than a call to
//   std::exp, which no loop vectorizes through (rows shorter than a block
//   and the tails of longer ones, which stay scalar, call std::exp). Its
//   argument is clamped in a pass of its own: clamping inside the same loop
//   lets the compiler branch around the polynomial for the clamped lanes, which
//   again blocks vectorization.
// - Every function allows its output to be its input.
//
// Rows hold at least one element where a function says so; the NaN handling
// is: a NaN anywhere in a row makes its sum, and so its softmax, NaN.
#ifndef SCOPEFLOW_OPERATORS_ACTIVATION_SOFTMAX_MATH_H_
#define SCOPEFLOW_OPERATORS_ACTIVATION_SOFTMAX_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace scopeflow {
namespace softmax_math {

// Elements per block of the blocked loops: 4 SSE or 2 AVX registers of
// floats, enough independent partial results to hide the adds' latency.
inline constexpr int kBlock = 16;

// exp's argument clamped to the domain of ExpOfClamped. For float, exp of
// anything below -88 is under 2^-126 (a subnormal) and comes out as 0.
// NaN stays NaN.
inline float ClampExpArg(float x) { return x < -88.0f ? -88.0f : x; }
inline double ClampExpArg(double x) { return x; }

// exp(x) for float x in [-88, 88] or NaN: Cephes' expf. x = n ln2 + r with
// n = round(x / ln2) and |r| <= ln2 / 2, a degree-7 polynomial for exp(r),
// times 2^n made from its exponent bits. Relative error below 1e-7 (about
// 1.5 ulp) where the result is a normal float; at x <= -87.68, n = -127
// makes 2^n's bits, and so the result, exactly 0.
inline float ExpOfClamped(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  // 1.5 * 2^23: adding it rounds x / ln2 to an integer held in the low bits.
  constexpr float kRound = 12582912.0f;
  constexpr uint32_t kRoundBits = 0x4b400000;
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  // ln2 in two parts, so that n * ln2 loses no bits.
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  uint32_t t_bits;
  std::memcpy(&t_bits, &t, sizeof(t_bits));
  // n + 127 as a biased exponent; unsigned, so NaN's garbage cannot
  // overflow (the result is NaN anyway, from p).
  const uint32_t scale_bits = (t_bits - kRoundBits + 127u) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof(scale));
  return p * scale;
}
inline double ExpOfClamped(double x) { return std::exp(x); }

namespace internal {

// The largest of partial[0, kBlock).
template <typename T>
T FoldMax(const T* partial) {
  T max = partial[0];
  for (int j = 1; j < kBlock; ++j) max = partial[j] > max ? partial[j] : max;
  return max;
}

// The sum of partial[0, kBlock), pairwise.
template <typename T>
T FoldSum(const T* partial) {
  T half[kBlock / 2];
  for (int j = 0; j < kBlock / 2; ++j) {
    half[j] = partial[j] + partial[j + kBlock / 2];
  }
  T sum = 0;
  for (int j = 0; j < kBlock / 2; ++j) sum += half[j];
  return sum;
}

}  // namespace internal

// The largest of x[0, n), n >= 1. With NaN elements the result may be NaN
// or the largest of the others; either way the row's exp sum comes out NaN.
template <typename T>
T Max(const T* x, int64_t n) {
  T max = x[0];
  int64_t i = 0;
  if (n >= kBlock) {
    T partial[kBlock];
    for (int j = 0; j < kBlock; ++j) partial[j] = x[j];
    for (i = kBlock; i + kBlock <= n; i += kBlock) {
      for (int j = 0; j < kBlock; ++j) {
        partial[j] = x[i + j] > partial[j] ? x[i + j] : partial[j];
      }
    }
    max = internal::FoldMax(partial);
  }
  // The tail, or a whole row shorter than a block: blocks cost more than
  // they save there.
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  return max;
}

namespace internal {

// Sum of exp(x[i] - shift) over [0, n), also stored to y[i] if kStore.
template <bool kStore, typename T>
T ExpShiftedSum(const T* x, T shift, T* y, int64_t n) {
  T sum = 0;
  int64_t i = 0;
  if (n >= kBlock) {
    T partial[kBlock] = {};
    for (; i + kBlock <= n; i += kBlock) {
      T block[kBlock];
      for (int j = 0; j < kBlock; ++j) {
        block[j] = ClampExpArg(x[i + j] - shift);
      }
      for (int j = 0; j < kBlock; ++j) block[j] = ExpOfClamped(block[j]);
      for (int j = 0; j < kBlock; ++j) {
        if constexpr (kStore) y[i + j] = block[j];
        partial[j] += block[j];
      }
    }
    sum = FoldSum(partial);
  }
  // The tail, or a whole row shorter than a block, through std::exp: the
  // scalar polynomial is no faster, and the two agree within 2 ulp.
  for (; i < n; ++i) {
    const T e = std::exp(x[i] - shift);
    if constexpr (kStore) y[i] = e;
    sum += e;
  }
  return sum;
}

}  // namespace internal

// y[i] = exp(x[i] - shift) for i in [0, n); returns their sum. shift is the
// row's maximum, so every exp is at most 1.
template <typename T>
T ExpShifted(const T* x, T shift, T* y, int64_t n) {
  return internal::ExpShiftedSum<true>(x, shift, y, n);
}

// The sum of exp(x[i] - shift) over [0, n), storing nothing.
template <typename T>
T SumExpShifted(const T* x, T shift, int64_t n) {
  return internal::ExpShiftedSum<false>(x, shift, static_cast<T*>(nullptr), n);
}

// y[i] *= factor.
template <typename T>
void Scale(T* y, T factor, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= factor;
}

// y[i] = (x[i] - shift) - offset: log-softmax as the shifted logit minus
// log(sum), subtracted in that order so that a large shift cancels exactly.
template <typename T>
void SubtractShifted(const T* x, T shift, T offset, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - shift) - offset;
}

// Softmax of each of `rows` contiguous rows of n >= 1 elements.
template <typename T>
void SoftmaxRows(const T* x, T* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * n;
    T* out = y + r * n;
    const T max = Max(in, n);
    const T sum = ExpShifted(in, max, out, n);
    Scale(out, T(1) / sum, n);
  }
}

// Log-softmax of each of `rows` contiguous rows of n >= 1 elements.
template <typename T>
void LogSoftmaxRows(const T* x, T* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * n;
    const T max = Max(in, n);
    const T log_sum = std::log(SumExpShifted(in, max, n));
    SubtractShifted(in, max, log_sum, y + r * n, n);
  }
}

// The sum of x[0, n), in blocks of partial sums as Max keeps its partial
// maxima.
template <typename T>
T Sum(const T* x, int64_t n) {
  T sum = 0;
  int64_t i = 0;
  if (n >= kBlock) {
    T partial[kBlock] = {};
    for (; i + kBlock <= n; i += kBlock) {
      for (int j = 0; j < kBlock; ++j) partial[j] += x[i + j];
    }
    sum = internal::FoldSum(partial);
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

// The sum of a[i] * b[i] over [0, n), blocked as Sum.
template <typename T>
T Dot(const T* a, const T* b, int64_t n) {
  T sum = 0;
  int64_t i = 0;
  if (n >= kBlock) {
    T partial[kBlock] = {};
    for (; i + kBlock <= n; i += kBlock) {
      for (int j = 0; j < kBlock; ++j) partial[j] += a[i + j] * b[i + j];
    }
    sum = internal::FoldSum(partial);
  }
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// The gradient of softmax over each of `rows` contiguous rows of n elements,
// from its output y and the gradient g flowing into it:
// dx = y * (g - sum(g * y)), the Jacobian diag(y) - y y^T applied to g.
template <typename T>
void SoftmaxGradRows(const T* y, const T* g, T* dx, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* y_row = y + r * n;
    const T* g_row = g + r * n;
    T* dx_row = dx + r * n;
    const T dot = Dot(g_row, y_row, n);
    for (int64_t i = 0; i < n; ++i) dx_row[i] = y_row[i] * (g_row[i] - dot);
  }
}

// dx[i] = g[i] - exp(out[i]) * sum, exp blocked as in ExpShiftedSum.
template <typename T>
void SubtractScaledExp(const T* out, const T* g, T sum, T* dx, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T block[kBlock];
    for (int j = 0; j < kBlock; ++j) block[j] = ClampExpArg(out[i + j]);
    for (int j = 0; j < kBlock; ++j) block[j] = ExpOfClamped(block[j]);
    for (int j = 0; j < kBlock; ++j) dx[i + j] = g[i + j] - block[j] * sum;
  }
  for (; i < n; ++i) dx[i] = g[i] - std::exp(out[i]) * sum;
}

// The gradient of log-softmax over each of `rows` contiguous rows of n
// elements, from its output out and the gradient g flowing into it:
// dx = g - exp(out) * sum(g), exp(out) being the softmax.
template <typename T>
void LogSoftmaxGradRows(const T* out, const T* g, T* dx, int64_t rows,
                        int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* g_row = g + r * n;
    SubtractScaledExp(out + r * n, g_row, Sum(g_row, n), dx + r * n, n);
  }
}

}  // namespace softmax_math
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACTIVATION_SOFTMAX_MATH_H_
