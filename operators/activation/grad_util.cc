#include "operators/activation/grad_util.h"

#include <utility>

#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace activation {

absl::Status CheckSameInfo(const InferContext& context, absl::string_view a,
                           absl::string_view b) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, a, b));
  const VarInfo& x = context.Input(a);
  const VarInfo& y = context.Input(b);
  if (!x.has_dims || !y.has_dims) return absl::OkStatus();
  bool same = x.dims.size() == y.dims.size();
  for (size_t d = 0; same && d < x.dims.size(); ++d) {
    same = x.dims[d] < 0 || y.dims[d] < 0 || x.dims[d] == y.dims[d];
  }
  SF_CHECK(same,
           "inputs \"%s\" (variable \"%s\", shape %s) and \"%s\" (variable "
           "\"%s\", shape %s) must have one shape",
           a, context.InputName(a), DimsToString(x.dims), b,
           context.InputName(b), DimsToString(y.dims));
  return absl::OkStatus();
}

InferFn GradLike(std::string like) {
  return [like = std::move(like)](InferContext& context) -> absl::Status {
    SF_RETURN_IF_ERROR(CheckFloatInput(context, like));
    SF_RETURN_IF_ERROR(CheckSameInfo(context, like, "Out@GRAD"));
    if (context.HasOutput("X@GRAD")) {
      context.SetOutput("X@GRAD", context.Input(like));
    }
    return absl::OkStatus();
  };
}

}  // namespace activation
}  // namespace scopeflow
