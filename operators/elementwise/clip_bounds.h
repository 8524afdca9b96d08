// clip's bounds, shared by its CPU kernels (unary.cc) and its CUDA
// kernels' adapters (unary_cuda.cc).
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_CLIP_BOUNDS_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_CLIP_BOUNDS_H_

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace elementwise {

// The bounds clip applies to T: "min" and "max", for integers rounded
// inward to whole numbers and saturated to T's range.
template <typename T>
std::pair<T, T> ClipBounds(float min, float max) {
  if constexpr (std::is_integral_v<T>) {
    // Both limits are exact in double: 0 or -2^k, and 2^k.
    constexpr double kLowest =
        static_cast<double>(std::numeric_limits<T>::min());
    constexpr double kBeyond =
        static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2;
    auto saturate = [&](double v) {
      if (v <= kLowest) return std::numeric_limits<T>::min();
      if (v >= kBeyond) return std::numeric_limits<T>::max();
      return static_cast<T>(v);
    };
    return {saturate(std::ceil(min)), saturate(std::floor(max))};
  } else {
    return {static_cast<T>(min), static_cast<T>(max)};
  }
}

// Where a clip bound comes from, for errors: input `slot` when bound, else
// attribute `attr`.
std::string ClipBoundSource(const KernelContext& context,
                            absl::string_view slot, absl::string_view attr);

// The bounds of clip and clip_grad: "min" and "max" as ClipBounds gives
// them, each replaced by input "Min" or "Max" (one element of X's dtype)
// when that is bound. Inference checked the attributes; bounds from inputs
// are known only here, so their order is checked here too.
template <typename T>
absl::StatusOr<std::pair<T, T>> KernelClipBounds(const KernelContext& context) {
  std::pair<T, T> bounds = ClipBounds<T>(context.attrs().Get<float>("min"),
                                         context.attrs().Get<float>("max"));
  if (!context.HasInput("Min") && !context.HasInput("Max")) return bounds;
  if (context.HasInput("Min")) {
    SF_ASSIGN_OR_RETURN(bounds.first, ScalarInput<T>(context, "Min"));
  }
  if (context.HasInput("Max")) {
    SF_ASSIGN_OR_RETURN(bounds.second, ScalarInput<T>(context, "Max"));
  }
  SF_CHECK(!(bounds.second < bounds.first),
           "the lower bound %s (%s) exceeds the upper bound %s (%s): "
           "expected min <= max",
           absl::StrCat(bounds.first), ClipBoundSource(context, "Min", "min"),
           absl::StrCat(bounds.second), ClipBoundSource(context, "Max", "max"));
  return bounds;
}

}  // namespace elementwise
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_CLIP_BOUNDS_H_
