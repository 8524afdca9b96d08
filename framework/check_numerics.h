// The executor's numerics check (RunOptions::check_numerics): after an op,
// whether any of its floating-point outputs holds a NaN or an infinity.
#ifndef SCOPEFLOW_FRAMEWORK_CHECK_NUMERICS_H_
#define SCOPEFLOW_FRAMEWORK_CHECK_NUMERICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

struct NonFinite {
  // The element's position in the tensor's buffer, and its value.
  int64_t index = 0;
  double value = 0;
};

// The first NaN or infinity of a float32, float64 or float16 tensor (on any
// place: a device's tensor is copied to the host first), or none; other
// dtypes have none.
absl::StatusOr<std::optional<NonFinite>> FindNonFinite(const Tensor& tensor);

// OK, or an InvalidArgument error naming the op (its index and type), the
// output variable and its first non-finite element, for the first output of
// `op` holding one. `tensors` is indexed like `names`.
absl::Status CheckOutputsFinite(const PreparedOp& op,
                                const std::vector<std::string>& names,
                                Tensor* const* tensors);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_CHECK_NUMERICS_H_
