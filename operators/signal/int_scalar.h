// Integer scalars fed as inputs (ONNX's lengths, steps and axes), read by
// the signal ops at inference, where the value may not be visible yet, and
// in kernels.
#ifndef SCOPEFLOW_OPERATORS_SIGNAL_INT_SCALAR_H_
#define SCOPEFLOW_OPERATORS_SIGNAL_INT_SCALAR_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {
namespace signal {

// For inference: OK unless input `slot` is bound to a variable that is not
// one int32 or int64 element.
absl::Status CheckIntScalarInput(const InferContext& context,
                                 absl::string_view slot);

// For inference: the value of input `slot` where it is bound and visible
// (at run time), nullopt where it is bound but not visible (at Prepare).
// Only for bound inputs; checks as CheckIntScalarInput does.
absl::StatusOr<std::optional<int64_t>> IntScalarAtInference(
    const InferContext& context, absl::string_view slot);

// For kernels: the one element of bound input `slot`, int32 or int64.
absl::StatusOr<int64_t> IntScalarInput(const KernelContext& context,
                                       absl::string_view slot);

}  // namespace signal
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SIGNAL_INT_SCALAR_H_
