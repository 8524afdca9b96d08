#include "framework/prepared_net.h"

namespace scopeflow {

int PreparedNet::VarIndex(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

const PreparedNet& PreparedNet::PlanFor(
    absl::Span<const std::string> fetches) const {
  if (as_written_ == nullptr) return *this;
  for (const std::string& name : fetches) {
    if (VarIndex(name) < 0) return *as_written_;
  }
  return *this;
}

}  // namespace scopeflow
