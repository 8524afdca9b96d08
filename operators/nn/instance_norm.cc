// instance_norm: ONNX's InstanceNormalization. Each channel of each sample
// of X [N, C, spatial...] is normalized over its spatial elements, then
// scaled and shifted by that channel's Scale and Bias: group normalization
// with one group per channel. instance_norm_grad: the gradients of X, Scale
// and Bias, recomputing the statistics from X.
#include <algorithm>
#include <cstdint>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/group_norm_math.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// One group per channel (1 while the channels are unknown: any count
// divides them).
int64_t ChannelsOf(const InferContext& context) {
  const VarInfo& x = context.Input("X");
  return x.has_dims && x.dims.size() >= 2 && x.dims[1] > 0 ? x.dims[1] : 1;
}

absl::Status CheckInputs(const InferContext& context) {
  return nn::CheckGroupNormInputs(context, ChannelsOf(context),
                                  "one group per channel",
                                  /*allow_per_group=*/false);
}

absl::Status InferInstanceNorm(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckInputs(context));
  context.SetOutput("Y", context.Input("X"));
  return absl::OkStatus();
}

// One group per channel; a tensor without channels has none to normalize
// (one group of none keeps the arithmetic away from a division by zero).
nn::GroupNormShape ShapeOf(const KernelContext& context) {
  const Dims& dims = context.Input("X").dims();
  return nn::GroupNormShapeOf(dims, std::max<int64_t>(dims[1], 1), dims[1]);
}

template <typename T>
absl::Status InstanceNormKernel(KernelContext& context) {
  nn::GroupNormForward<T>(ShapeOf(context), context.Input("X").data<T>(),
                          context.Input("Scale").data<T>(),
                          context.Input("Bias").data<T>(),
                          context.attrs().Get<float>("epsilon"),
                          context.Output("Y")->data<T>());
  return absl::OkStatus();
}

absl::Status InferInstanceNormGrad(InferContext& context) {
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
absl::Status InstanceNormGradKernel(KernelContext& context) {
  nn::GroupNormBackward<T>(
      ShapeOf(context), context.Input("X").data<T>(),
      context.Input("Scale").data<T>(), context.Input("Y@GRAD").data<T>(),
      context.attrs().Get<float>("epsilon"), OutputOrNull<T>(context, "X@GRAD"),
      OutputOrNull<T>(context, "Scale@GRAD"),
      OutputOrNull<T>(context, "Bias@GRAD"));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(instance_norm)
    .Input("X")
    .Input("Scale")
    .Input("Bias")
    .Output("Y")
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferInstanceNorm)
    .Grad(GradSpec("instance_norm_grad")
              .ReadInput("X")
              .ReadInput("Scale")
              .ReadInput("Bias")
              .ReadOutputGrad("Y")
              .WriteInputGrad("X")
              .WriteInputGrad("Scale")
              .WriteInputGrad("Bias"))
    .Kernel(DeviceType::kCPU, kFloat32, &InstanceNormKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &InstanceNormKernel<double>);

// Reads Bias only for the shape of Bias@GRAD.
SF_REGISTER_OP(instance_norm_grad)
    .Input("X")
    .Input("Scale")
    .Input("Bias")
    .Input("Y@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Scale@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Infer(InferInstanceNormGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &InstanceNormGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &InstanceNormGradKernel<double>);

}  // namespace scopeflow
