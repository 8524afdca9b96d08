// Helpers shared by operator registrations: attribute checks, common shape
// inference, broadcasting.
#ifndef SCOPEFLOW_OPERATORS_COMMON_H_
#define SCOPEFLOW_OPERATORS_COMMON_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/attribute.h"
#include "framework/op_context.h"
#include "framework/op_spec.h"
#include "framework/tensor.h"

namespace scopeflow {

// Attribute checks for OpSpec::Attr.
AttrCheckFn Positive();     // int, int64, float, or every element of a list
AttrCheckFn NonNegative();  // same
AttrCheckFn InRange(double low, double high);         // low <= value <= high
AttrCheckFn OneOf(std::vector<std::string> choices);  // string attributes

// Inference: `out` gets the dtype and shape of `in`.
InferFn SameAsInput(std::string in = "X", std::string out = "Out");

// For gradient ops: each output "S@GRAD" that is bound gets the shape and
// dtype of input "S", for every S of `slots`.
InferFn GradsLikeInputs(std::vector<std::string> slots);

// numpy broadcasting of two shapes (-1: unknown, matches anything). An
// InvalidArgument error names both shapes when they do not broadcast.
absl::StatusOr<Dims> BroadcastDims(absl::Span<const int64_t> a,
                                   absl::Span<const int64_t> b);

// `axis` in [-rank, rank) made non-negative; InvalidArgument naming the
// attribute and the rank otherwise.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank,
                                  absl::string_view attr = "axis");

// OK if the input of `slot` has rank within [min_rank, max_rank]; errors
// name the slot, the variable and its shape.
absl::Status CheckRank(const InferContext& context, absl::string_view slot,
                       int min_rank, int max_rank);

// Error unless the input of `slot` has `dtype`, naming slot and variable.
absl::Status CheckDtype(const InferContext& context, absl::string_view slot,
                        DataType dtype);

// Error unless the inputs of slots `a` and `b` have one dtype.
absl::Status CheckSameDtype(const InferContext& context, absl::string_view a,
                            absl::string_view b);

// Overflow-checked int64 arithmetic for shape inference, whose operands
// (declared dims, attributes) come from users' nets and may be anything: the
// exact result, or nullopt where it does not fit in int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// The number of elements of a tensor of `dims`: -1 if any of them is unknown
// (negative), nullopt if the count does not fit in int64. 0 if a dim is 0,
// however large the others.
std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> dims);

// CheckedNumElements of the input of `slot` (-1 if its rank or a dim is
// unknown); an error describing the input if the count does not fit in int64.
absl::StatusOr<int64_t> InputNumElements(const InferContext& context,
                                         absl::string_view slot, int i = 0);

// Row-major strides of `dims`, in elements.
Dims StridesOf(absl::Span<const int64_t> dims);

// `input "X" (variable "x", shape [2, 3])`; the shape is "[?]" when the rank
// is unknown.
std::string DescribeInputShape(const InferContext& context,
                               absl::string_view slot);

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

#endif  // SCOPEFLOW_OPERATORS_COMMON_H_
