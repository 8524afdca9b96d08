// group_norm: ONNX's GroupNormalization. X [N, C, spatial...] is normalized
// over each of "groups" groups of C / groups channels of each sample, then
// scaled and shifted: by one Scale and Bias value per channel (opset 21's
// form) or per group (opset 18's; a Scale of "groups" values where that is
// not C). group_norm_grad: the gradients of X, Scale and Bias, recomputing
// the statistics from X.
#include <string>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/group_norm_math.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status CheckInputs(const InferContext& context) {
  const int64_t groups = context.attrs().Get<int32_t>("groups");
  return nn::CheckGroupNormInputs(
      context, groups, absl::StrFormat("attribute \"groups\" = %d", groups),
      /*allow_per_group=*/true);
}

absl::Status InferGroupNorm(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  context.SetOutput("Y", context.Input("X"));
  return absl::OkStatus();
}

nn::GroupNormShape ShapeOf(const KernelContext& context) {
  return nn::GroupNormShapeOf(context.Input("X").dims(),
                              context.attrs().Get<int32_t>("groups"),
                              context.Input("Scale").numel());
}

template <typename T>
absl::Status GroupNormKernel(KernelContext& context) {
  nn::GroupNormForward<T>(ShapeOf(context), context.Input("X").data<T>(),
                          context.Input("Scale").data<T>(),
                          context.Input("Bias").data<T>(),
                          context.attrs().Get<float>("epsilon"),
                          context.Output("Y")->data<T>());
  return absl::OkStatus();
}

absl::Status InferGroupNormGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  SF_RETURN_IF_ERROR(
      nn::CheckGradInput(context, "Y@GRAD", context.Input("X"), "Y"));
  return GradsLikeInputs({"X", "Scale", "Bias"})(context);
}

template <typename T>
T* OutputOrNull(KernelContext& context, const char* slot) {
  return context.HasOutput(slot) ? context.Output(slot)->data<T>() : nullptr;
}

template <typename T>
absl::Status GroupNormGradKernel(KernelContext& context) {
  nn::GroupNormBackward<T>(
      ShapeOf(context), context.Input("X").data<T>(),
      context.Input("Scale").data<T>(), context.Input("Y@GRAD").data<T>(),
      context.attrs().Get<float>("epsilon"), OutputOrNull<T>(context, "X@GRAD"),
      OutputOrNull<T>(context, "Scale@GRAD"),
      OutputOrNull<T>(context, "Bias@GRAD"));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(group_norm)
    .Input("X")
    .Input("Scale")
    .Input("Bias")
    .Output("Y")
    .Attr("groups", AttrType::kInt, Positive())
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferGroupNorm)
    .Grad(GradSpec("group_norm_grad")
              .ReadInput("X")
              .ReadInput("Scale")
              .ReadInput("Bias")
              .ReadOutputGrad("Y")
              .WriteInputGrad("X")
              .WriteInputGrad("Scale")
              .WriteInputGrad("Bias"))
    .Kernel(DeviceType::kCPU, kFloat32, &GroupNormKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GroupNormKernel<double>);

// Reads Bias only for the shape of Bias@GRAD.
SF_REGISTER_OP(group_norm_grad)
    .Input("X")
    .Input("Scale")
    .Input("Bias")
    .Input("Y@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Scale@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("groups", AttrType::kInt, Positive())
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferGroupNormGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &GroupNormGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &GroupNormGradKernel<double>);

}  // namespace scopeflow
