// gather: slices of X picked along an axis by a tensor of indices.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/shape/shape_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using shape_util::DescribeInput;
using shape_util::NormalizeAxisOf;

// Output dims: X.dims[:axis] + Index.dims + X.dims[axis + 1:].
absl::Status InferGather(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const VarInfo& index = context.Input("Index");
  SF_CHECK(index.dtype == kInt32 || index.dtype == kInt64,
           "%s has dtype %s: expected int32 or int64",
           DescribeInput(context, "Index"), DataTypeName(index.dtype));
  if (!x.has_dims || !index.has_dims) {
    if (x.has_dims) {
      SF_RETURN_IF_ERROR(NormalizeAxisOf(context, "X",
                                         context.attrs().Get<int32_t>("axis"),
                                         static_cast<int>(x.dims.size()))
                             .status());
    }
    VarInfo out;
    out.dtype = x.dtype;
    context.SetOutput("Out", out);
    return absl::OkStatus();
  }
  SF_ASSIGN_OR_RETURN(
      const int axis,
      NormalizeAxisOf(context, "X", context.attrs().Get<int32_t>("axis"),
                      static_cast<int>(x.dims.size())));
  Dims out(x.dims.begin(), x.dims.begin() + axis);
  out.insert(out.end(), index.dims.begin(), index.dims.end());
  out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
  context.SetOutput("Out", 0, x.dtype, std::move(out));
  return absl::OkStatus();
}

// The index of element `flat` of a row-major tensor of `dims`, e.g.
// "[1, 0]".
std::string UnravelIndex(int64_t flat, absl::Span<const int64_t> dims) {
  Dims index(dims.size());
  for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
    index[k] = flat % dims[k];
    flat /= dims[k];
  }
  return DimsToString(index);
}

template <typename I>
absl::Status GatherWith(const Tensor& x, const Tensor& index, int axis,
                        Tensor* out) {
  const absl::Span<const int64_t> dims(x.dims());
  const int64_t outer = NumElements(dims.subspan(0, axis));
  const int64_t n = dims[axis];
  const int64_t inner_bytes = NumElements(dims.subspan(axis + 1)) *
                              static_cast<int64_t>(SizeOf(x.dtype()));
  const I* indices = index.data<I>();
  const int64_t count = index.numel();
  // Checked once, before any copy.
  for (int64_t j = 0; j < count; ++j) {
    const int64_t i = indices[j];
    SF_CHECK(i >= -n && i < n,
             "input \"Index\" holds %d at %s, out of range for axis %d of "
             "input \"X\" (shape %s): expected [%d, %d)",
             i, UnravelIndex(j, index.dims()), axis, DimsToString(dims), -n, n);
  }
  if (out->numel() == 0) return absl::OkStatus();  // No buffer to write.
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out->raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = indices[j] < 0 ? indices[j] + n : indices[j];
      std::memcpy(dst + (o * count + j) * inner_bytes,
                  src + (o * n + i) * inner_bytes,
                  static_cast<size_t>(inner_bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status GatherKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& index = context.Input("Index");
  const int32_t attr_axis = context.attrs().Get<int32_t>("axis");
  const int axis = attr_axis < 0 ? attr_axis + x.rank() : attr_axis;
  Tensor* out = context.Output("Out");
  if (index.dtype() == kInt32) {
    return GatherWith<int32_t>(x, index, axis, out);
  }
  return GatherWith<int64_t>(x, index, axis, out);
}

}  // namespace

SF_REGISTER_OP(gather)
    .Input("X")
    .Input("Index")
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Infer(InferGather)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &GatherKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &GatherKernel)
    .Kernel(DeviceType::kCPU, kInt32, &GatherKernel)
    .Kernel(DeviceType::kCPU, kInt64, &GatherKernel)
    .Kernel(DeviceType::kCPU, kBool, &GatherKernel);

}  // namespace scopeflow
