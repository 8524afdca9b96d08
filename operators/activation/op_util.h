// Inference helpers shared by the activation and reduction ops (candidates
// for operators/common.h): dtype checks and axis handling whose errors name
// the input slot, its variable and what was expected.
#ifndef SCOPEFLOW_OPERATORS_ACTIVATION_OP_UTIL_H_
#define SCOPEFLOW_OPERATORS_ACTIVATION_OP_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/data_type.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// `input "X" (variable "x", shape [2, 3])`; the shape is "[?]" when the rank
// is unknown.
std::string DescribeInput(const InferContext& context, absl::string_view slot);

// Error unless the input of `slot` has one of `dtypes`, e.g. `input "X"
// (variable "x") has dtype int32: expected float32 or float64`.
absl::Status CheckDtypeIn(const InferContext& context, absl::string_view slot,
                          absl::Span<const DataType> dtypes);

// CheckDtypeIn with float32 and float64.
absl::Status CheckFloatInput(const InferContext& context,
                             absl::string_view slot);

// The int64 attribute `attr` as an axis of the input of `slot`, made
// non-negative; the input's rank must be known. The error names the input,
// its shape and the range expected.
absl::StatusOr<int> InputAxis(const InferContext& context,
                              absl::string_view slot,
                              absl::string_view attr = "axis");

// A tensor of `dims` seen as [outer, size, inner] around `axis`: `size` is
// dims[axis], `outer` the product of the dimensions before it and `inner`
// of those after.
struct AxisSplit {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
};
AxisSplit SplitAtAxis(absl::Span<const int64_t> dims, int axis);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACTIVATION_OP_UTIL_H_
