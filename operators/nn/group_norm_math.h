// The arithmetic of group normalization, shared by group_norm and
// instance_norm (a group per channel) and their gradient ops: X of shape
// [N, C, spatial...] is normalized over each group of C / G channels of each
// sample, then scaled and shifted per channel (or per group). Stateless
// functions; callers own every buffer.
#ifndef SCOPEFLOW_OPERATORS_NN_GROUP_NORM_MATH_H_
#define SCOPEFLOW_OPERATORS_NN_GROUP_NORM_MATH_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"

namespace scopeflow {
namespace nn {

struct GroupNormShape {
  int64_t batch = 0;
  int64_t channels = 0;
  // Elements per channel of one sample (the product of the spatial dims).
  int64_t spatial = 1;
  int64_t groups = 1;
  // Scale and Bias hold one value per group rather than per channel.
  bool per_group = false;
};

// For inference: OK unless X (float32 or float64, rank 2 or more), Scale
// and Bias (1-D, of X's dtype, with C values, or G where
// `allow_per_group`) and `groups` (dividing C) contradict each other. The
// errors name the input, its variable and what was expected; `groups_origin`
// says where the group count comes from (e.g. `attribute "groups" = 3`).
absl::Status CheckGroupNormInputs(const InferContext& context, int64_t groups,
                                  absl::string_view groups_origin,
                                  bool allow_per_group);

// The shape of a run with X of `x_dims`, `groups` groups and Scale of
// `scale_size` values (checked by CheckGroupNormInputs at inference).
GroupNormShape GroupNormShapeOf(const Dims& x_dims, int64_t groups,
                                int64_t scale_size);

// y = (x - mean) / sqrt(var + epsilon) * scale + bias, the mean and the
// (biased) variance taken over each group of each sample.
template <typename T>
void GroupNormForward(const GroupNormShape& shape, const T* x, const T* scale,
                      const T* bias, double epsilon, T* y);

// The gradients from dy: of x, scale and bias, each skipped where null.
template <typename T>
void GroupNormBackward(const GroupNormShape& shape, const T* x, const T* scale,
                       const T* dy, double epsilon, T* dx, T* dscale, T* dbias);

}  // namespace nn
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_GROUP_NORM_MATH_H_
