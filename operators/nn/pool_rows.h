// The inner loops of channels-first pooling over a row of windows. Along
// the last spatial axis, the windows that lie wholly on the input (all but
// a few at the edges) start `stride` cells apart and take the same taps:
// tap k of window o is cell o * stride + k * dilation of the row. So the
// row's windows take one tap at a time together, in loops over o that
// vectorise, instead of one window at a time over a handful of cells.
//
// Each loop combines taps in the order a window-at-a-time loop does
// (operators/nn/pool2d.cc), so both give the same results to the bit.
#ifndef SCOPEFLOW_OPERATORS_NN_POOL_ROWS_H_
#define SCOPEFLOW_OPERATORS_NN_POOL_ROWS_H_

#include <cstdint>
#include <type_traits>

namespace scopeflow {
namespace pool {

// Calls body(std::integral_constant<int64_t, S>) with S the stride where it
// is 1 or 2 (the strides of nearly every net: a compile-time stride lets
// the loops load whole vectors) and 0, meaning "read it at run time",
// otherwise.
template <typename Body>
void WithStride(int64_t stride, Body body) {
  if (stride == 1) {
    body(std::integral_constant<int64_t, 1>());
  } else if (stride == 2) {
    body(std::integral_constant<int64_t, 2>());
  } else {
    body(std::integral_constant<int64_t, 0>());
  }
}

// dst[o] = src[o * stride] for o in [0, n): a row's first tap.
template <int64_t kStride, typename T>
void CopyTap(const T* __restrict src, int64_t stride, int64_t n,
             T* __restrict dst) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t o = 0; o < n; ++o) dst[o] = src[o * s];
}

// Takes a further tap into each window's maximum: the larger value, or a
// NaN, as the window-at-a-time loop keeps the first maximum or the last
// NaN (v != v: v is NaN).
template <int64_t kStride, typename T>
void MaxTapInto(const T* __restrict src, int64_t stride, int64_t n,
                T* __restrict dst) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t o = 0; o < n; ++o) {
    const T v = src[o * s];
    const T b = dst[o];
    dst[o] = v > b || v != v ? v : b;
  }
}

// Adds a further tap to each window's sum.
template <int64_t kStride, typename T>
void AddTapInto(const T* __restrict src, int64_t stride, int64_t n,
                T* __restrict dst) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t o = 0; o < n; ++o) dst[o] += src[o * s];
}

// As MaxTapInto, also noting which tap holds each window's maximum: its
// ordinal `tap` (a window's taps counted from 0, the same for all windows
// of the row). 32-bit ordinals are as wide as float32 values, so one
// compare's mask selects both and the loop vectorises.
template <int64_t kStride, typename T>
void ArgMaxTapInto(const T* __restrict src, int64_t stride, int64_t n,
                   int32_t tap, T* __restrict best,
                   int32_t* __restrict best_tap) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t o = 0; o < n; ++o) {
    const T v = src[o * s];
    const bool take = v > best[o] || v != v;
    best[o] = take ? v : best[o];
    best_tap[o] = take ? tap : best_tap[o];
  }
}

// Adds each window's share of the gradient to its tap: dst[o * stride] +=
// share[o]. Only for windows that do not overlap along the row (stride at
// least their extent), whose taps are then all different cells.
template <int64_t kStride, typename T>
void SpreadTap(const T* __restrict share, int64_t stride, int64_t n,
               T* __restrict dst) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t o = 0; o < n; ++o) dst[o * s] += share[o];
}

}  // namespace pool
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_POOL_ROWS_H_
