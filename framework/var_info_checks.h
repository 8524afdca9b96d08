// Checks of a variable's dtype and shape against what inference knows
// (VarInfo), shared by Prepare and the executor's runs.
#ifndef SCOPEFLOW_FRAMEWORK_VAR_INFO_CHECKS_H_
#define SCOPEFLOW_FRAMEWORK_VAR_INFO_CHECKS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// "float32 [2, 3]", or "float32 [?]" where the rank is unknown.
std::string InfoToString(const VarInfo& info);

// Whether the dtype and every dimension are known.
bool FullyKnown(const VarInfo& info);

// OK if `dims` can be a variable's shape: each dim known (>= 0) or unknown
// (-1), and the known nonzero dims' product within int64. Inference may then
// multiply any of a shape's dims without overflow; the error says what is
// wrong.
absl::Status CheckShape(absl::Span<const int64_t> dims);

// Whether a declared shape admits `dims` (-1 matches anything).
bool ShapeAdmits(const VarInfo& declared, absl::Span<const int64_t> dims);

// What a tensor holds, as a fully known VarInfo.
VarInfo InfoOf(const Tensor& tensor);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_VAR_INFO_CHECKS_H_
