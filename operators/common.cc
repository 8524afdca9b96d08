#include "operators/common.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Applies `ok` to the number(s) an attribute holds.
absl::Status CheckNumbers(const AttrValue& value,
                          const std::function<bool(double)>& ok,
                          const std::string& expected) {
  auto check = [&](double x) -> absl::Status {
    SF_CHECK(ok(x), "must be %s, got %g", expected, x);
    return absl::OkStatus();
  };
  switch (TypeOf(value)) {
    case AttrType::kInt:
      return check(std::get<int32_t>(value));
    case AttrType::kInt64:
      return check(static_cast<double>(std::get<int64_t>(value)));
    case AttrType::kFloat:
      return check(std::get<float>(value));
    case AttrType::kInts:
      for (int32_t x : std::get<std::vector<int32_t>>(value)) {
        SF_RETURN_IF_ERROR(check(x));
      }
      return absl::OkStatus();
    case AttrType::kInt64s:
      for (int64_t x : std::get<std::vector<int64_t>>(value)) {
        SF_RETURN_IF_ERROR(check(static_cast<double>(x)));
      }
      return absl::OkStatus();
    case AttrType::kFloats:
      for (float x : std::get<std::vector<float>>(value)) {
        SF_RETURN_IF_ERROR(check(x));
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

}  // namespace

AttrCheckFn Positive() {
  return [](const AttrValue& value) {
    return CheckNumbers(
        value, [](double x) { return x > 0; }, "positive");
  };
}

AttrCheckFn NonNegative() {
  return [](const AttrValue& value) {
    return CheckNumbers(
        value, [](double x) { return x >= 0; }, "non-negative");
  };
}

AttrCheckFn InRange(double low, double high) {
  return [low, high](const AttrValue& value) {
    return CheckNumbers(
        value, [low, high](double x) { return low <= x && x <= high; },
        absl::StrFormat("in [%g, %g]", low, high));
  };
}

AttrCheckFn OneOf(std::vector<std::string> choices) {
  return [choices](const AttrValue& value) -> absl::Status {
    const std::string& s = std::get<std::string>(value);
    SF_CHECK(std::find(choices.begin(), choices.end(), s) != choices.end(),
             "must be one of %s, got \"%s\"", absl::StrJoin(choices, ", "), s);
    return absl::OkStatus();
  };
}

InferFn SameAsInput(std::string in, std::string out) {
  return [in, out](InferContext& context) {
    context.SetOutput(out, context.Input(in));
    return absl::OkStatus();
  };
}

InferFn GradsLikeInputs(std::vector<std::string> slots) {
  return [slots](InferContext& context) {
    for (const std::string& slot : slots) {
      const std::string grad = GradName(slot);
      for (int i = 0; i < context.OutputCount(grad); ++i) {
        context.SetOutput(grad, i, context.Input(slot, i));
      }
    }
    return absl::OkStatus();
  };
}

absl::StatusOr<Dims> BroadcastDims(absl::Span<const int64_t> a,
                                   absl::Span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      out[i] = std::max(da, db);  // The known one, or unknown.
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("shapes %s and %s do not broadcast", DimsToString(a),
                          DimsToString(b)));
    }
  }
  return out;
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank,
                                  absl::string_view attr) {
  SF_CHECK(axis >= -rank && axis < rank,
           "attribute \"%s\" = %d is out of range for rank %d (expected "
           "[%d, %d))",
           attr, axis, rank, -rank, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::Status CheckRank(const InferContext& context, absl::string_view slot,
                       int min_rank, int max_rank) {
  const VarInfo& info = context.Input(slot);
  if (!info.has_dims) return absl::OkStatus();
  const int rank = static_cast<int>(info.dims.size());
  SF_CHECK(min_rank <= rank && rank <= max_rank,
           "input \"%s\" (variable \"%s\") has shape %s: expected rank %s",
           slot, context.InputName(slot), DimsToString(info.dims),
           min_rank == max_rank
               ? absl::StrCat(min_rank)
               : absl::StrFormat("%d to %d", min_rank, max_rank));
  return absl::OkStatus();
}

absl::Status CheckDtype(const InferContext& context, absl::string_view slot,
                        DataType dtype) {
  const VarInfo& info = context.Input(slot);
  SF_CHECK(info.dtype == dtype,
           "input \"%s\" (variable \"%s\") has dtype %s: expected %s", slot,
           context.InputName(slot), DataTypeName(info.dtype),
           DataTypeName(dtype));
  return absl::OkStatus();
}

absl::Status CheckSameDtype(const InferContext& context, absl::string_view a,
                            absl::string_view b) {
  const VarInfo& x = context.Input(a);
  const VarInfo& y = context.Input(b);
  SF_CHECK(x.dtype == y.dtype,
           "inputs \"%s\" (variable \"%s\", %s) and \"%s\" (variable \"%s\", "
           "%s) must have one dtype",
           a, context.InputName(a), DataTypeName(x.dtype), b,
           context.InputName(b), DataTypeName(y.dtype));
  return absl::OkStatus();
}

std::optional<int64_t> CheckedNumElements(absl::Span<const int64_t> dims) {
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    empty = empty || d == 0;
  }
  if (empty) return 0;
  int64_t count = 1;
  for (int64_t d : dims) {
    const std::optional<int64_t> product = CheckedMul(count, d);
    if (!product.has_value()) return std::nullopt;
    count = *product;
  }
  return count;
}

absl::StatusOr<int64_t> InputNumElements(const InferContext& context,
                                         absl::string_view slot, int i) {
  const VarInfo& info = context.Input(slot, i);
  if (!info.has_dims) return -1;
  const std::optional<int64_t> count = CheckedNumElements(info.dims);
  SF_CHECK(count.has_value(),
           "input \"%s\" (variable \"%s\", shape %s) has more elements than "
           "int64 holds",
           slot, context.InputName(slot, i), DimsToString(info.dims));
  return *count;
}

Dims StridesOf(absl::Span<const int64_t> dims) {
  Dims strides(dims.size());
  int64_t stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

std::string DescribeInputShape(const InferContext& context,
                               absl::string_view slot) {
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
        DescribeInputShape(context, slot), ": ", axis.status().message()));
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
