#include "operators/elementwise/clip_bounds.h"

#include "absl/strings/str_format.h"

namespace scopeflow {
namespace elementwise {

std::string ClipBoundSource(const KernelContext& context,
                            absl::string_view slot, absl::string_view attr) {
  return context.HasInput(slot)
             ? absl::StrFormat("input \"%s\" (variable \"%s\")", slot,
                               context.InputName(slot))
             : absl::StrFormat("attribute \"%s\"", attr);
}

}  // namespace elementwise
}  // namespace scopeflow
