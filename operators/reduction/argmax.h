// The argmax and argmin rules shared by argmax, argmin and accuracy, and
// the axis of their kernels (CPU and CUDA).
#ifndef SCOPEFLOW_OPERATORS_REDUCTION_ARGMAX_H_
#define SCOPEFLOW_OPERATORS_REDUCTION_ARGMAX_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "absl/status/statusor.h"
#include "framework/op_context.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {

// Whether `value`, met after `best`, becomes the argmax: only if strictly
// larger, so ties keep the first index; NaN counts as the largest, so the
// first NaN wins (as in numpy). With `last`, ties and NaNs take the later
// index instead: the last maximum, or the last NaN.
template <typename T>
bool ArgMaxReplaces(T value, T best, bool last = false) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(value)) return last || !std::isnan(best);
    if (std::isnan(best)) return false;
  }
  return last ? value >= best : value > best;
}

// ArgMaxReplaces's rule for the smallest value: strictly smaller replaces
// (with `last`, also equal); NaN still wins over any number (as in numpy's
// argmin).
template <typename T>
bool ArgMinReplaces(T value, T best, bool last = false) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(value)) return last || !std::isnan(best);
    if (std::isnan(best)) return false;
  }
  return last ? value <= best : value < best;
}

// The index in [0, n) of the largest of x[0], x[stride], ...,
// x[(n - 1) * stride] (the last of tied ones with `last`); n >= 1.
template <typename T>
int64_t ArgMax(const T* x, int64_t n, int64_t stride = 1, bool last = false) {
  int64_t index = 0;
  T best = x[0];
  for (int64_t k = 1; k < n; ++k) {
    if (ArgMaxReplaces(x[k * stride], best, last)) {
      best = x[k * stride];
      index = k;
    }
  }
  return index;
}

// X of an argmax kernel split at attribute "axis" (checked against X's
// rank), the axis that argmax reduces.
inline absl::StatusOr<AxisSplit> ArgMaxSplit(const KernelContext& context) {
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int64_t>("axis"), x.rank()));
  return SplitAtAxis(x.dims(), axis);
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_REDUCTION_ARGMAX_H_
