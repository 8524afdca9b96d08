// Op parameters given either as an attribute or as an input tensor.
//
// Some ops take a parameter (a target shape, axes, sizes, bounds) as an
// attribute and also as an optional input, for values known only at run
// time (Paddle's reshape2 has "shape" and "Shape"; ONNX feeds such values
// as graph inputs or computes them). The input, when bound, wins.
//
// Inference sees an input's values through InferContext::InputValue, that
// is at run time only. At Prepare it leaves the output dimensions that
// depend on them unknown (-1), so that the executor infers the op again at
// every run. Kernels read the values from their own inputs and validate
// them again where they index by them: a gradient op whose outputs have
// shapes Prepare fully knew runs without inference.
#ifndef SCOPEFLOW_OPERATORS_VALUE_INPUT_H_
#define SCOPEFLOW_OPERATORS_VALUE_INPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {

// A list of integers and where it came from.
struct IntValues {
  std::vector<int64_t> values;
  // `attribute "axes"` or `input "Axes" (variable "a")`.
  std::string origin;

  // For errors, made only for them: the origin and the values, e.g.
  // `attribute "axes" = [0, 2]` (a long list elided in the middle).
  std::string source() const;
};

// For inference: OK unless input `slot` is bound to a variable of a dtype
// other than int32 and int64, or of a rank other than 1.
absl::Status CheckIntListInput(const InferContext& context,
                               absl::string_view slot);

// The number of values input `slot` holds as far as inference knows: -1
// unless it is bound to a 1-D variable of known size.
int64_t IntListInputLength(const InferContext& context, absl::string_view slot);

// The integers of input `slot` if it is bound, else of attribute `attr`
// (int, ints, int64 or int64s). For inference: nullopt when the input is
// bound but its values are not visible (at Prepare), unless it is known to
// be empty. Both check the input as CheckIntListInput does.
absl::StatusOr<std::optional<IntValues>> IntListOf(const InferContext& context,
                                                   absl::string_view slot,
                                                   absl::string_view attr);
absl::StatusOr<IntValues> IntListOf(const KernelContext& context,
                                    absl::string_view slot,
                                    absl::string_view attr);

// `axes` made non-negative for an input of rank `rank`: each must lie in
// [-rank, rank), and none may come twice. Errors name axes.source() and end
// with ", for " `input` where that describes the input.
absl::StatusOr<std::vector<int>> NormalizeAxisList(
    const IntValues& axes, int rank, absl::string_view input = "");

// For inference: OK unless input `slot` is bound to a variable of a dtype
// other than `dtype`, or of more than one element (rank 0, or 1-D of size
// 1).
absl::Status CheckScalarInput(const InferContext& context,
                              absl::string_view slot, DataType dtype);

// `tensor` itself if it is on the CPU, else a copy there: values that
// decide shapes are read on the host.
absl::StatusOr<Tensor> OnHost(const Tensor& tensor);

// For kernels: the one element of input `slot` (checked as
// CheckScalarInput does, with the dtype of T).
template <typename T>
absl::StatusOr<T> ScalarInput(const KernelContext& context,
                              absl::string_view slot) {
  const Tensor& tensor = context.Input(slot);
  SF_CHECK(tensor.dtype() == DataTypeOf<T>() && tensor.numel() == 1 &&
               tensor.rank() <= 1,
           "input \"%s\" (variable \"%s\") is %s: expected one %s element",
           slot, context.InputName(slot), tensor.DebugString(),
           DataTypeName(DataTypeOf<T>()));
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(tensor));
  return *host.data<T>();
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_VALUE_INPUT_H_
