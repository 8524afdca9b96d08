#include "operators/indexing/index_util.h"

#include "absl/strings/str_format.h"
#include "framework/data_type.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace indexing {
namespace {

template <typename I>
absl::Status NormalizeInto(const I* values, const KernelContext& context,
                           absl::string_view index_slot,
                           absl::string_view data_slot,
                           absl::Span<const int64_t> data_dims,
                           absl::Span<const int> axes,
                           std::vector<int64_t>& out) {
  const Tensor& index = context.Input(index_slot);
  const size_t cycle = axes.size();
  for (int64_t j = 0; j < index.numel(); ++j) {
    const int axis = axes[static_cast<size_t>(j) % cycle];
    const int64_t n = data_dims[axis];
    const int64_t i = values[j];
    SF_CHECK(i >= -n && i < n,
             "input \"%s\" (variable \"%s\") holds %d at %s, out of range for "
             "axis %d of input \"%s\" (variable \"%s\", shape %s): expected "
             "[%d, %d)",
             index_slot, context.InputName(index_slot), i,
             UnravelIndex(j, index.dims()), axis, data_slot,
             context.InputName(data_slot), DimsToString(data_dims), -n, n);
    out[j] = i < 0 ? i + n : i;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckIndexDtype(const InferContext& context,
                             absl::string_view slot) {
  return CheckDtypeIn(context, slot, {kInt32, kInt64});
}

absl::StatusOr<int> CheckElementsIndex(const InferContext& context,
                                       absl::string_view data_slot) {
  SF_RETURN_IF_ERROR(CheckIndexDtype(context, "Index"));
  const VarInfo& data = context.Input(data_slot);
  const VarInfo& index = context.Input("Index");
  if (!data.has_dims) return -1;
  SF_CHECK(!data.dims.empty(), "%s is a scalar: expected rank 1 or more",
           DescribeInputShape(context, data_slot));
  SF_ASSIGN_OR_RETURN(const int axis, InputAxis(context, data_slot));
  if (!index.has_dims) return axis;
  SF_CHECK(index.dims.size() == data.dims.size(),
           "%s has rank %d: expected the rank of %s",
           DescribeInputShape(context, "Index"), index.dims.size(),
           DescribeInputShape(context, data_slot));
  for (size_t d = 0; d < data.dims.size(); ++d) {
    if (static_cast<int>(d) == axis || index.dims[d] < 0 || data.dims[d] < 0) {
      continue;
    }
    SF_CHECK(index.dims[d] <= data.dims[d],
             "%s is larger than %s along axis %d: expected at most %d",
             DescribeInputShape(context, "Index"),
             DescribeInputShape(context, data_slot), d, data.dims[d]);
  }
  return axis;
}

bool ShapesAgree(const VarInfo& a, const VarInfo& b) {
  if (!a.has_dims || !b.has_dims) return true;
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    if (a.dims[d] >= 0 && b.dims[d] >= 0 && a.dims[d] != b.dims[d]) {
      return false;
    }
  }
  return true;
}

std::string UnravelIndex(int64_t flat, absl::Span<const int64_t> dims) {
  Dims index(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    index[k] = dims[k] == 0 ? 0 : flat % dims[k];
    flat = dims[k] == 0 ? 0 : flat / dims[k];
  }
  return DimsToString(index);
}

absl::StatusOr<std::vector<int64_t>> ReadIndices(
    const KernelContext& context, absl::string_view index_slot,
    absl::string_view data_slot, absl::Span<const int64_t> data_dims,
    absl::Span<const int> axes) {
  const Tensor& index = context.Input(index_slot);
  std::vector<int64_t> out(static_cast<size_t>(index.numel()));
  if (index.numel() == 0) return out;
  if (index.dtype() == kInt32) {
    SF_RETURN_IF_ERROR(NormalizeInto(index.data<int32_t>(), context, index_slot,
                                     data_slot, data_dims, axes, out));
  } else {
    SF_RETURN_IF_ERROR(NormalizeInto(index.data<int64_t>(), context, index_slot,
                                     data_slot, data_dims, axes, out));
  }
  return out;
}

absl::StatusOr<Slices> SliceOffsets(const KernelContext& context,
                                    absl::string_view data_slot,
                                    absl::Span<const int64_t> data_dims,
                                    int batch_dims) {
  const Tensor& index = context.Input("Index");
  const int64_t k = index.dims().back();
  std::vector<int> axes(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) axes[i] = batch_dims + static_cast<int>(i);
  Slices slices;
  slices.size = NumElements(data_dims.subspan(batch_dims + k));
  const int64_t rows =
      k == 0 ? NumElements(
                   absl::MakeConstSpan(index.dims()).first(index.rank() - 1))
             : index.numel() / k;
  slices.offsets.assign(static_cast<size_t>(rows), 0);
  if (rows == 0) return slices;
  std::vector<int64_t> indices;
  if (k > 0) {
    SF_ASSIGN_OR_RETURN(
        indices, ReadIndices(context, "Index", data_slot, data_dims, axes));
  }
  const Dims strides = StridesOf(data_dims);
  const int64_t batches = NumElements(data_dims.first(batch_dims));
  const int64_t rows_per_batch = rows / batches;
  const int64_t batch_stride = batch_dims == 0 ? 0 : strides[batch_dims - 1];
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = (row / rows_per_batch) * batch_stride;
    for (int64_t i = 0; i < k; ++i) {
      offset += indices[row * k + i] * strides[batch_dims + i];
    }
    slices.offsets[row] = offset;
  }
  return slices;
}

std::vector<std::string> ReductionNames() {
  return {"none", "add", "mul", "max", "min"};
}

Reduction ReductionOf(const Attributes& attrs) {
  const std::string& name = attrs.Get<std::string>("reduction");
  if (name == "add") return Reduction::kAdd;
  if (name == "mul") return Reduction::kMul;
  if (name == "max") return Reduction::kMax;
  if (name == "min") return Reduction::kMin;
  return Reduction::kNone;
}

absl::Status CheckDifferentiableReduction(const Attributes& attrs) {
  const Reduction reduction = ReductionOf(attrs);
  SF_CHECK_CODE(reduction == Reduction::kNone || reduction == Reduction::kAdd,
                absl::StatusCode::kUnimplemented,
                "attribute \"reduction\" is \"%s\": gradients exist here for "
                "\"none\" and \"add\" only",
                attrs.Get<std::string>("reduction"));
  return absl::OkStatus();
}

}  // namespace indexing
}  // namespace scopeflow
