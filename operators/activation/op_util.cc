#include "operators/activation/op_util.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {

std::string DescribeInput(const InferContext& context, absl::string_view slot) {
  const VarInfo& info = context.Input(slot);
  return absl::StrFormat("input \"%s\" (variable \"%s\", shape %s)", slot,
                         context.InputName(slot),
                         info.has_dims ? DimsToString(info.dims) : "[?]");
}

absl::Status CheckDtypeIn(const InferContext& context, absl::string_view slot,
                          absl::Span<const DataType> dtypes) {
  const DataType dtype = context.Input(slot).dtype;
  if (std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end()) {
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (DataType d : dtypes) names.push_back(DataTypeName(d));
  std::string expected = names.back();
  if (names.size() > 1) {
    names.pop_back();
    expected = absl::StrCat(absl::StrJoin(names, ", "), " or ", expected);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "input \"%s\" (variable \"%s\") has dtype %s: expected %s", slot,
      context.InputName(slot), DataTypeName(dtype), expected));
}

absl::Status CheckFloatInput(const InferContext& context,
                             absl::string_view slot) {
  return CheckDtypeIn(context, slot, {kFloat32, kFloat64});
}

absl::StatusOr<int> InputAxis(const InferContext& context,
                              absl::string_view slot, absl::string_view attr) {
  const int rank = static_cast<int>(context.Input(slot).dims.size());
  absl::StatusOr<int> axis =
      NormalizeAxis(context.attrs().Get<int64_t>(attr), rank, attr);
  if (!axis.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        DescribeInput(context, slot), ": ", axis.status().message()));
  }
  return *axis;
}

AxisSplit SplitAtAxis(absl::Span<const int64_t> dims, int axis) {
  AxisSplit split;
  for (int i = 0; i < axis; ++i) split.outer *= dims[i];
  split.size = dims[axis];
  for (size_t i = axis + 1; i < dims.size(); ++i) split.inner *= dims[i];
  return split;
}

}  // namespace scopeflow
