#include "operators/reduction/reduce_axes.h"

#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace reduction {

absl::StatusOr<std::vector<bool>> ReducedAxes(const IntValues& axes,
                                              bool noop_with_empty_axes,
                                              int rank) {
  std::vector<bool> reduced(rank, axes.values.empty() && !noop_with_empty_axes);
  for (int64_t axis : axes.values) {
    SF_CHECK(axis >= -rank && axis < rank,
             "%s: axis %d is out of range for rank %d (expected [%d, %d))",
             axes.source(), axis, rank, -rank, rank);
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    SF_CHECK(!reduced[normalized],
             "%s names axis %d twice (expected distinct axes)", axes.source(),
             normalized);
    reduced[normalized] = true;
  }
  return reduced;
}

absl::StatusOr<std::vector<bool>> KernelReducedAxes(
    const KernelContext& context, const Tensor& x, absl::string_view slot) {
  SF_ASSIGN_OR_RETURN(const IntValues axes, IntListOf(context, "Axes", "axes"));
  SF_ASSIGN_OR_RETURN(
      std::vector<bool> reduced,
      ReducedAxes(axes, context.attrs().Get<bool>("noop_with_empty_axes"),
                  x.rank()));
  int64_t kept = 1;
  for (int i = 0; i < x.rank(); ++i) {
    if (!reduced[i]) kept *= x.dim(i);
  }
  const Tensor& indexed =
      slot == "Out" ? *context.Output("Out") : context.Input(slot);
  SF_CHECK(indexed.numel() == kept,
           "%s reduces X's shape %s to %d elements, but \"%s\" holds %d",
           axes.source(), DimsToString(x.dims()), kept, slot, indexed.numel());
  return reduced;
}

ReduceShape Coalesce(absl::Span<const int64_t> dims,
                     const std::vector<bool>& reduced) {
  ReduceShape shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!shape.sizes.empty() && shape.reduced.back() == reduced[i]) {
      shape.sizes.back() *= dims[i];
    } else {
      shape.sizes.push_back(dims[i]);
      shape.reduced.push_back(reduced[i]);
    }
  }
  return shape;
}

}  // namespace reduction
}  // namespace scopeflow
