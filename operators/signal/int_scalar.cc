#include "operators/signal/int_scalar.h"

#include <string>

#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace signal {
namespace {

constexpr DataType kIntDtypes[] = {kInt32, kInt64};

absl::StatusOr<int64_t> ValueOf(const Tensor& tensor, absl::string_view slot,
                                const std::string& var) {
  SF_CHECK((tensor.dtype() == kInt32 || tensor.dtype() == kInt64) &&
               tensor.numel() == 1 && tensor.rank() <= 1,
           "input \"%s\" (variable \"%s\") is %s: expected one int32 or int64 "
           "element",
           slot, var, tensor.DebugString());
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(tensor));
  return host.dtype() == kInt32 ? *host.data<int32_t>() : *host.data<int64_t>();
}

}  // namespace

absl::Status CheckIntScalarInput(const InferContext& context,
                                 absl::string_view slot) {
  if (!context.HasInput(slot)) return absl::OkStatus();
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, slot, kIntDtypes));
  return CheckScalarInput(context, slot, context.Input(slot).dtype);
}

absl::StatusOr<std::optional<int64_t>> IntScalarAtInference(
    const InferContext& context, absl::string_view slot) {
  SF_RETURN_IF_ERROR(CheckIntScalarInput(context, slot));
  const Tensor* value = context.InputValue(slot);
  if (value == nullptr) return std::optional<int64_t>();
  SF_ASSIGN_OR_RETURN(const int64_t v,
                      ValueOf(*value, slot, context.InputName(slot)));
  return std::optional<int64_t>(v);
}

absl::StatusOr<int64_t> IntScalarInput(const KernelContext& context,
                                       absl::string_view slot) {
  return ValueOf(context.Input(slot), slot, context.InputName(slot));
}

}  // namespace signal
}  // namespace scopeflow
