#include "operators/nn/kernel_util.h"

#include "absl/types/span.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace nn {

absl::StatusOr<Rows> RowsOf(const KernelContext& context, const Tensor& x) {
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxis(context.attrs().Get<int32_t>("begin_norm_axis"), x.rank(),
                    "begin_norm_axis"));
  const absl::Span<const int64_t> dims = x.dims();
  return Rows{NumElements(dims.subspan(0, axis)),
              NumElements(dims.subspan(axis))};
}

}  // namespace nn
}  // namespace scopeflow
