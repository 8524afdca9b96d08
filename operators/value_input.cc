#include "operators/value_input.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "operators/common.h"

namespace scopeflow {
namespace {

// Where the values of input `slot` come from, without them.
std::string InputSource(absl::string_view slot, const std::string& var) {
  return absl::StrFormat("input \"%s\" (variable \"%s\")", slot, var);
}

// OK if a variable of `dtype` and `dims` can hold a list of integers.
absl::Status CheckIntList(absl::string_view slot, const std::string& var,
                          DataType dtype, const Dims* dims) {
  SF_CHECK(dtype == kInt32 || dtype == kInt64,
           "%s has dtype %s: expected int32 or int64", InputSource(slot, var),
           DataTypeName(dtype));
  SF_CHECK(dims == nullptr || dims->size() == 1,
           "%s has shape %s: expected a 1-D list of integers",
           InputSource(slot, var), DimsToString(*dims));
  return absl::OkStatus();
}

// The values of a checked int32 or int64 tensor.
absl::StatusOr<IntValues> ReadIntList(const Tensor& tensor,
                                      absl::string_view slot,
                                      const std::string& var) {
  SF_RETURN_IF_ERROR(CheckIntList(slot, var, tensor.dtype(), &tensor.dims()));
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(tensor));
  IntValues list;
  list.values.reserve(host.numel());
  for (int64_t i = 0; i < host.numel(); ++i) {
    list.values.push_back(host.dtype() == kInt32 ? host.data<int32_t>()[i]
                                                 : host.data<int64_t>()[i]);
  }
  list.origin = InputSource(slot, var);
  return list;
}

// Attribute `attr` as a list: a single integer is a list of one.
IntValues AttrIntList(const Attributes& attrs, absl::string_view attr) {
  IntValues list;
  const AttrValue& value = attrs.values().at(attr);
  if (const auto* ints = std::get_if<std::vector<int32_t>>(&value)) {
    list.values.assign(ints->begin(), ints->end());
  } else if (const auto* int64s = std::get_if<std::vector<int64_t>>(&value)) {
    list.values = *int64s;
  } else if (const auto* i = std::get_if<int32_t>(&value)) {
    list.values = {*i};
  } else {
    list.values = {std::get<int64_t>(value)};
  }
  list.origin = absl::StrFormat("attribute \"%s\"", attr);
  return list;
}

}  // namespace

std::string IntValues::source() const {
  // Enough of the list to recognise it.
  constexpr size_t kShown = 16;
  if (values.size() <= kShown) {
    return absl::StrCat(origin, " = [", absl::StrJoin(values, ", "), "]");
  }
  return absl::StrCat(
      origin, " = [",
      absl::StrJoin(values.begin(), values.begin() + kShown / 2, ", "),
      ", ... (", values.size() - kShown, " more) ..., ",
      absl::StrJoin(values.end() - kShown / 2, values.end(), ", "), "]");
}

absl::Status CheckIntListInput(const InferContext& context,
                               absl::string_view slot) {
  if (!context.HasInput(slot)) return absl::OkStatus();
  const VarInfo& info = context.Input(slot);
  return CheckIntList(slot, context.InputName(slot), info.dtype,
                      info.has_dims ? &info.dims : nullptr);
}

int64_t IntListInputLength(const InferContext& context,
                           absl::string_view slot) {
  if (!context.HasInput(slot)) return -1;
  const VarInfo& info = context.Input(slot);
  return info.has_dims && info.dims.size() == 1 ? info.dims[0] : -1;
}

absl::StatusOr<std::optional<IntValues>> IntListOf(const InferContext& context,
                                                   absl::string_view slot,
                                                   absl::string_view attr) {
  if (!context.HasInput(slot)) return AttrIntList(context.attrs(), attr);
  SF_RETURN_IF_ERROR(CheckIntListInput(context, slot));
  const Tensor* value = context.InputValue(slot);
  if (value != nullptr) {
    return ReadIntList(*value, slot, context.InputName(slot));
  }
  if (IntListInputLength(context, slot) == 0) {
    return IntValues{{}, InputSource(slot, context.InputName(slot))};
  }
  return std::optional<IntValues>();
}

absl::StatusOr<IntValues> IntListOf(const KernelContext& context,
                                    absl::string_view slot,
                                    absl::string_view attr) {
  if (!context.HasInput(slot)) return AttrIntList(context.attrs(), attr);
  return ReadIntList(context.Input(slot), slot, context.InputName(slot));
}

absl::StatusOr<std::vector<int>> NormalizeAxisList(const IntValues& axes,
                                                   int rank,
                                                   absl::string_view input) {
  const std::string suffix = input.empty() ? "" : absl::StrCat(", for ", input);
  std::vector<int> normalized;
  std::vector<bool> seen(rank, false);
  for (int64_t axis : axes.values) {
    SF_CHECK(axis >= -rank && axis < rank,
             "%s: axis %d is out of range for rank %d (expected [%d, %d))%s",
             axes.source(), axis, rank, -rank, rank, suffix);
    const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
    SF_CHECK(!seen[a], "%s names axis %d twice (expected distinct axes)%s",
             axes.source(), a, suffix);
    seen[a] = true;
    normalized.push_back(a);
  }
  return normalized;
}

absl::Status CheckScalarInput(const InferContext& context,
                              absl::string_view slot, DataType dtype) {
  if (!context.HasInput(slot)) return absl::OkStatus();
  const VarInfo& info = context.Input(slot);
  const bool one =
      !info.has_dims || info.dims.empty() ||
      (info.dims.size() == 1 && (info.dims[0] == 1 || info.dims[0] < 0));
  SF_CHECK(info.dtype == dtype && one,
           "%s is %s %s: expected one %s element (a scalar)",
           InputSource(slot, context.InputName(slot)), DataTypeName(info.dtype),
           info.has_dims ? DimsToString(info.dims) : "[?]",
           DataTypeName(dtype));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> OnHost(const Tensor& tensor) {
  if (tensor.place().is_cpu()) return tensor;
  return tensor.CopyTo(CPUPlace());
}

}  // namespace scopeflow
