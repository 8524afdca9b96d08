#include "operators/shape/slice_pad_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "operators/strided_copy.h"

namespace scopeflow {
namespace shape_util {

Range SliceRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / step + 1 : 0};
  }
  start = std::clamp<int64_t>(start, -1, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - 1) / -step + 1 : 0};
}

absl::StatusOr<Slice> ResolveSlice(const SliceParams& params, int rank,
                                   absl::string_view input) {
  const IntValues& axes = *params.axes;
  const std::vector<int64_t>& starts = params.starts->values;
  const size_t n = starts.size();
  const std::vector<int64_t>& steps = params.steps->values;
  SF_CHECK(params.ends->values.size() == n &&
               (axes.values.empty() || axes.values.size() == n) &&
               (steps.empty() || steps.size() == n),
           "expected as many ends, axes (if any) and steps (if any) as "
           "starts, got %s, %s, %s and %s, for %s",
           params.starts->source(), params.ends->source(), axes.source(),
           params.steps->source(), input);
  for (int64_t step : steps) {
    SF_CHECK(step != 0, "%s holds a 0, for %s", params.steps->source(), input);
  }
  Slice slice;
  if (axes.values.empty()) {
    SF_CHECK(static_cast<int64_t>(n) <= rank,
             "%s slices %d axes, but the input has rank %d (no axes given: "
             "expected one start per leading axis), for %s",
             params.starts->source(), n, rank, input);
    for (size_t i = 0; i < n; ++i) slice.axes.push_back(static_cast<int>(i));
  } else {
    SF_ASSIGN_OR_RETURN(slice.axes, NormalizeAxisList(axes, rank, input));
  }
  slice.starts = starts;
  slice.ends = params.ends->values;
  slice.steps = steps.empty() ? std::vector<int64_t>(n, 1) : steps;
  // A step of INT64_MIN takes the first element only, as the largest
  // negative step that can be negated does.
  for (int64_t& step : slice.steps) {
    step = std::max(step, -std::numeric_limits<int64_t>::max());
  }
  return slice;
}

absl::StatusOr<SliceBox> SliceBoxOf(const KernelContext& context,
                                    absl::Span<const int64_t> dims,
                                    absl::Span<const int64_t> box_dims,
                                    absl::string_view box_slot) {
  SF_ASSIGN_OR_RETURN(const SliceParams params, SliceParamsOf(context));
  const int rank = static_cast<int>(dims.size());
  SF_ASSIGN_OR_RETURN(
      const Slice slice,
      ResolveSlice(params, rank,
                   absl::StrCat("input \"X\" of shape ", DimsToString(dims))));
  Dims expected(dims.begin(), dims.end());
  const Dims x_strides = StridesOf(dims);
  SliceBox box{0, x_strides};
  for (size_t i = 0; i < slice.axes.size(); ++i) {
    const int a = slice.axes[i];
    const Range range =
        SliceRange(slice.starts[i], slice.ends[i], slice.steps[i], dims[a]);
    expected[a] = range.size;
    box.offset += range.start * x_strides[a];
    // A step beyond the dim takes one element; its stride is never used
    // (and the product could overflow).
    box.strides[a] = range.size > 1 ? x_strides[a] * slice.steps[i] : 0;
  }
  SF_CHECK(absl::Span<const int64_t>(expected) == box_dims,
           "the slice of input \"X\" of shape %s has shape %s, but \"%s\" "
           "has shape %s",
           DimsToString(dims), DimsToString(expected), box_slot,
           DimsToString(box_dims));
  return box;
}

PadMode PadModeOf(const Attributes& attrs) {
  const std::string& mode = attrs.Get<std::string>("mode");
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "wrap") return PadMode::kWrap;
  return PadMode::kConstant;
}

absl::Status CheckPaddings(const IntValues& paddings, int64_t rank,
                           absl::string_view x) {
  const int64_t n = static_cast<int64_t>(paddings.values.size());
  SF_CHECK(n % 2 == 0,
           "%s has odd length %d: expected [before_0, after_0, before_1, "
           "after_1, ...], two per dim of %s",
           paddings.source(), n, x);
  SF_CHECK(rank < 0 || n == 2 * rank,
           "%s pads %d dims, but %s has rank %d: expected 2 * rank = %d "
           "entries",
           paddings.source(), n / 2, x, rank, 2 * rank);
  for (int64_t p : paddings.values) {
    SF_CHECK(p >= 0,
             "%s holds a negative value (expected non-negative), for %s",
             paddings.source(), x);
  }
  return absl::OkStatus();
}

absl::StatusOr<IntValues> KernelPaddings(const KernelContext& context,
                                         absl::Span<const int64_t> x,
                                         absl::Span<const int64_t> out,
                                         absl::string_view out_slot) {
  SF_ASSIGN_OR_RETURN(IntValues paddings,
                      IntListOf(context, "Paddings", "paddings"));
  const std::string x_text = absl::StrCat("X of shape ", DimsToString(x));
  SF_RETURN_IF_ERROR(CheckPaddings(paddings, x.size(), x_text));
  Dims padded(x.begin(), x.end());
  for (size_t i = 0; i < x.size(); ++i) {
    padded[i] += paddings.values[2 * i] + paddings.values[2 * i + 1];
  }
  SF_CHECK(absl::Span<const int64_t>(padded) == out,
           "%s pads %s to %s, but \"%s\" has shape %s", paddings.source(),
           x_text, DimsToString(padded), out_slot, DimsToString(out));
  return paddings;
}

absl::StatusOr<PadGradParams> KernelPadGradParams(
    const KernelContext& context, absl::Span<const int64_t> grad_dims) {
  PadGradParams params;
  SF_ASSIGN_OR_RETURN(params.paddings,
                      IntListOf(context, "Paddings", "paddings"));
  params.grad_text =
      absl::StrCat("Out@GRAD of shape ", DimsToString(grad_dims));
  const int rank = static_cast<int>(grad_dims.size());
  SF_RETURN_IF_ERROR(CheckPaddings(params.paddings, rank, params.grad_text));
  const std::vector<int64_t>& p = params.paddings.values;
  Dims& x_dims = params.x_dims;
  x_dims.assign(grad_dims.begin(), grad_dims.end());
  for (int i = 0; i < rank; ++i) {
    SF_CHECK(p[2 * i] <= x_dims[i] && p[2 * i + 1] <= x_dims[i] - p[2 * i],
             "%s is smaller than %s along dim %d", params.grad_text,
             params.paddings.source(), i);
    x_dims[i] -= p[2 * i] + p[2 * i + 1];
  }
  return params;
}

absl::Status CheckUnpaddedDims(const PadGradParams& params,
                               absl::Span<const int64_t> x_grad_dims) {
  SF_CHECK(absl::Span<const int64_t>(params.x_dims) == x_grad_dims,
           "%s unpads %s to %s, but \"X@GRAD\" has shape %s",
           params.paddings.source(), params.grad_text,
           DimsToString(params.x_dims), DimsToString(x_grad_dims));
  return absl::OkStatus();
}

int64_t InteriorOffset(const std::vector<int64_t>& paddings,
                       absl::Span<const int64_t> strides) {
  int64_t offset = 0;
  for (size_t i = 0; i < strides.size(); ++i) {
    offset += paddings[2 * i] * strides[i];
  }
  return offset;
}

}  // namespace shape_util
}  // namespace scopeflow
