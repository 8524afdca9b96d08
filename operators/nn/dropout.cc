// dropout: zeroes each element of X with probability dropout_prob during
// training; at inference passes X through (or scales it, for
// downgrade_in_infer).
// dropout_grad: the gradient of X, from the Mask the forward drew.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <variant>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/dropout_mask.h"
#include "operators/nn/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status CheckProbability(const AttrValue& value) {
  const float p = std::get<float>(value);
  SF_CHECK(p >= 0.0f && p < 1.0f, "must be in [0, 1), got %g", p);
  return absl::OkStatus();
}

absl::Status InferDropout(InferContext& context) {
  const VarInfo& x = context.Input("X");
  if (context.HasInput("Seed")) {
    SF_RETURN_IF_ERROR(CheckDtype(context, "Seed", kInt64));
    const VarInfo& seed = context.Input("Seed");
    SF_ASSIGN_OR_RETURN(const int64_t count, InputNumElements(context, "Seed"));
    SF_CHECK(count < 0 || count == 1,
             "input \"Seed\" (variable \"%s\") has shape %s: expected one "
             "element, the value mixed with attribute \"seed\"",
             context.InputName("Seed"), DimsToString(seed.dims));
  }
  context.SetOutput("Out", x);
  if (context.HasOutput("Mask")) {
    context.SetOutput("Mask", VarInfo{kUInt8, x.dims, x.has_dims});
  }
  return absl::OkStatus();
}

// Training draws one number per element from nn::MaskEngine with
// std::uniform_real_distribution. An element is kept (mask 1) if its draw
// is at least dropout_prob. Mask, when bound, is always written (all ones
// at inference), so the gradient can read it.
template <typename T>
absl::Status DropoutKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  uint8_t* mask = context.HasOutput("Mask")
                      ? context.Output("Mask")->data<uint8_t>()
                      : nullptr;
  const float p = context.attrs().Get<float>("dropout_prob");
  const T scale = nn::KeptScale<T>(context.attrs());
  const T* in = x.data<T>();
  T* o = out.data<T>();
  const int64_t n = x.numel();
  if (context.attrs().Get<bool>("is_test")) {
    for (int64_t i = 0; i < n; ++i) o[i] = in[i] * scale;
    if (mask != nullptr) std::fill(mask, mask + n, uint8_t{1});
    return absl::OkStatus();
  }
  std::mt19937 engine = nn::MaskEngine(
      context.attrs(), context.HasInput("Seed")
                           ? context.Input("Seed").data<int64_t>()
                           : nullptr);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = uniform(engine) >= p;
    o[i] = keep ? in[i] * scale : T{0};
    if (mask != nullptr) mask[i] = keep ? 1 : 0;
  }
  return absl::OkStatus();
}

// The mask is the only record of which elements were dropped.
absl::Status MakeDropoutGrad(GradOpContext& grad) {
  SF_CHECK(!grad.Output("Mask").empty(),
           "output \"Mask\" is not bound: the gradient of dropout reads the "
           "mask the forward draws; bind Mask to a variable");
  OpDef& op = grad.AddOp("dropout_grad");
  GradOpContext::SetInput(op, "Mask", grad.Output("Mask"));
  GradOpContext::SetInput(op, "Out@GRAD", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "X@GRAD", grad.InputGrad("X"));
  grad.CopyAttrs(op);
  return absl::OkStatus();
}

absl::Status InferDropoutGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "Mask", kUInt8));
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Out@GRAD"));
  const VarInfo& grad = context.Input("Out@GRAD");
  const VarInfo& mask = context.Input("Mask");
  // Out has the mask's shape.
  SF_RETURN_IF_ERROR(
      nn::CheckGradInput(context, "Out@GRAD",
                         VarInfo{grad.dtype, mask.dims, mask.has_dims}, "Out"));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput(
        "X@GRAD",
        grad.has_dims ? grad : VarInfo{grad.dtype, mask.dims, mask.has_dims});
  }
  return absl::OkStatus();
}

// X@GRAD = Out@GRAD * Mask * the factor the forward scaled kept elements
// by.
template <typename T>
absl::Status DropoutGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  const uint8_t* mask = context.Input("Mask").data<uint8_t>();
  const T scale = nn::KeptScale<T>(context.attrs());
  const T* g = grad.data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  for (int64_t i = 0; i < grad.numel(); ++i) {
    dx[i] = mask[i] != 0 ? g[i] * scale : T{0};
  }
  return absl::OkStatus();
}

}  // namespace

// Seed (optional): a one-element int64 tensor mixed with attribute "seed"
// to draw each training step's mask.
SF_REGISTER_OP(dropout)
    .Random()
    .Input("X")
    .Input("Seed", /*optional=*/true)
    .Output("Out")
    .Output("Mask", /*optional=*/true)
    .Attr("dropout_prob", AttrType::kFloat, AttrValue(0.5f), CheckProbability)
    .Attr("is_test", AttrType::kBool, AttrValue(false))
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dropout_implementation", AttrType::kString,
          AttrValue(std::string("upscale_in_train")),
          OneOf({"upscale_in_train", "downgrade_in_infer"}))
    .Infer(InferDropout)
    .Grad(GradSpec("dropout_grad")
              .ReadOutput("Mask")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .Maker(MakeDropoutGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &DropoutKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DropoutKernel<double>);

SF_REGISTER_OP(dropout_grad)
    .Input("Mask")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("dropout_prob", AttrType::kFloat, AttrValue(0.5f), CheckProbability)
    .Attr("is_test", AttrType::kBool, AttrValue(false))
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dropout_implementation", AttrType::kString,
          AttrValue(std::string("upscale_in_train")),
          OneOf({"upscale_in_train", "downgrade_in_infer"}))
    .KernelDtypeFromInput("Out@GRAD")
    .Infer(InferDropoutGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &DropoutGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DropoutGradKernel<double>);

}  // namespace scopeflow
