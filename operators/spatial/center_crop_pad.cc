// center_crop_pad: crops or zero-pads chosen axes of X to the lengths of
// "Shape" (input, or attribute "shape"), keeping the centre, as ONNX
// CenterCropPad (18) defines it: an axis longer than its target loses
// floor((d - t) / 2) cells before and the rest after; a shorter one gains
// floor((t - d) / 2) zeros before and the rest after. "axes" names the
// axes (default: all, in order; negative counts from the end), one target
// each.
//
// center_crop_pad_grad: X@GRAD is Out@GRAD cropped or padded back, the same
// map with the roles of X and Out swapped (the cells a crop dropped get 0).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/strided_copy.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The axes the targets apply to, made non-negative.
absl::StatusOr<std::vector<int>> AxesOf(const Attributes& attrs, int rank,
                                        const std::string& input) {
  IntValues axes;
  axes.origin = "attribute \"axes\"";
  for (int32_t a : attrs.Get<std::vector<int32_t>>("axes")) {
    axes.values.push_back(a);
  }
  if (axes.values.empty()) {
    for (int a = 0; a < rank; ++a) axes.values.push_back(a);
  }
  return NormalizeAxisList(axes, rank, input);
}

// Out's dims: X's with each of `axes` set to its target; -1 where a target
// is unknown.
absl::StatusOr<Dims> CroppedDims(const Dims& x, const std::vector<int>& axes,
                                 const std::optional<IntValues>& shape) {
  Dims out = x;
  if (!shape.has_value()) {
    for (int a : axes) out[a] = -1;
    return out;
  }
  SF_CHECK(shape->values.size() == axes.size(),
           "%s: expected %d values, one per axis cropped or padded",
           shape->source(), axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    SF_CHECK(shape->values[i] >= 0, "%s: expected lengths >= 0",
             shape->source());
    out[axes[i]] = shape->values[i];
  }
  return out;
}

absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const std::optional<IntValues> shape,
                      IntListOf(context, "Shape", "shape"));
  if (!x.has_dims) return VarInfo{x.dtype, Dims(), false};
  SF_ASSIGN_OR_RETURN(const std::vector<int> axes,
                      AxesOf(context.attrs(), static_cast<int>(x.dims.size()),
                             DescribeInputShape(context, "X")));
  SF_ASSIGN_OR_RETURN(const Dims out, CroppedDims(x.dims, axes, shape));
  return VarInfo{x.dtype, out, true};
}

absl::Status InferCenterCropPad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferCenterCropPadGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X"})(context);
}

// Copies the centre `from` and `to` share: on each axis the shorter of
// the two lengths, starting floor(difference / 2) into the longer. The
// rest of `to` is zero.
void CopyCentre(const Tensor& from, Tensor& to) {
  std::memset(to.raw_data(), 0, to.nbytes());
  const Dims& a = from.dims();
  const Dims& b = to.dims();
  Dims box(a.size());
  int64_t from_offset = 0;
  int64_t to_offset = 0;
  const Dims from_strides = StridesOf(a);
  const Dims to_strides = StridesOf(b);
  for (size_t i = 0; i < a.size(); ++i) {
    box[i] = std::min(a[i], b[i]);
    if (a[i] > b[i]) from_offset += (a[i] - b[i]) / 2 * from_strides[i];
    if (b[i] > a[i]) to_offset += (b[i] - a[i]) / 2 * to_strides[i];
  }
  if (NumElements(box) == 0) return;
  const size_t size = SizeOf(from.dtype());
  CopyStrided(static_cast<char*>(to.raw_data()) + to_offset * size, to_strides,
              static_cast<const char*>(from.raw_data()) + from_offset * size,
              from_strides, box, size);
}

// Kernels check the targets again: a gradient op whose output shape
// Prepare knew runs without inference.
absl::Status CheckTargets(const KernelContext& context, const Dims& x,
                          const Tensor& out, const std::string& out_what) {
  SF_ASSIGN_OR_RETURN(const IntValues shape,
                      IntListOf(context, "Shape", "shape"));
  SF_ASSIGN_OR_RETURN(const std::vector<int> axes,
                      AxesOf(context.attrs(), static_cast<int>(x.size()), ""));
  SF_ASSIGN_OR_RETURN(const Dims expected, CroppedDims(x, axes, shape));
  SF_CHECK(out.dims() == expected, "%s is %s: expected shape %s, as %s makes",
           out_what, out.DebugString(), DimsToString(expected), shape.source());
  return absl::OkStatus();
}

absl::Status CenterCropPadKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  SF_RETURN_IF_ERROR(
      CheckTargets(context, x.dims(), out,
                   absl::StrFormat("output \"Out\" (variable \"%s\")",
                                   context.OutputName("Out"))));
  CopyCentre(x, out);
  return absl::OkStatus();
}

absl::Status CenterCropPadGradKernel(KernelContext& context) {
  const Tensor& d_out = context.Input("Out@GRAD");
  // Not bound where no gradient of the input is wanted.
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  Tensor& d_x = *context.Output("X@GRAD");
  SF_RETURN_IF_ERROR(
      CheckTargets(context, d_x.dims(), d_out,
                   absl::StrFormat("input \"Out@GRAD\" (variable \"%s\")",
                                   context.InputName("Out@GRAD"))));
  CopyCentre(d_out, d_x);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(center_crop_pad)
    .Input("X")
    .Input("Shape", /*optional=*/true)
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferCenterCropPad)
    .Grad(GradSpec("center_crop_pad_grad")
              .ReadInput("X")
              .ReadInput("Shape")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto) { return &CenterCropPadKernel; });

// Reads X for its shape only.
SF_REGISTER_OP(center_crop_pad_grad)
    .Input("X")
    .Input("Shape", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("shape", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}))
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Infer(InferCenterCropPadGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &CenterCropPadGradKernel)
    .Kernel(DeviceType::kCPU, kFloat64, &CenterCropPadGradKernel);

}  // namespace scopeflow
