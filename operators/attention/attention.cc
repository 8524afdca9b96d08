// attention: Out = softmax(s * Q K^T + Mask) V over a batch of heads, the
// scaled dot-product attention of transformers, in one op whose kernel
// never holds more than a block of query rows' scores per thread
// (attention_cpu.h). Inputs Q, K, V and the optional Mask are laid out as
// attention_shape.h says (attributes "seq_first", "transpose_k"). The
// scale s is attribute "scale" times the optional one-element input
// "Scale", divided by the optional one-element input "Divisor": an
// imported net's scale is a parameter, whose value a pass of Prepare
// cannot see (framework/passes/attention_fusion.h). float32 and float64.
//
// attention_grad reads the forward's inputs, Out and Out@GRAD, and writes
// any of Q@GRAD, K@GRAD, V@GRAD, Mask@GRAD (summed over the dims the mask
// broadcasts along), Scale@GRAD and Divisor@GRAD.
#include <string>
#include <utility>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/attention/attention_cpu.h"
#include "operators/attention/attention_shape.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr const char* kInputs[] = {"Q", "K", "V", "Mask", "Scale", "Divisor"};

// Checks dtypes, the one-element scales and the shapes; returns Out's info.
absl::StatusOr<VarInfo> AttentionOutInfo(const InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Q"));
  for (const char* slot : kInputs) {
    if (context.HasInput(slot)) {
      SF_RETURN_IF_ERROR(CheckSameDtype(context, "Q", slot));
    }
  }
  for (const char* slot : {"Scale", "Divisor"}) {
    if (!context.HasInput(slot)) continue;
    SF_ASSIGN_OR_RETURN(const int64_t n, InputNumElements(context, slot));
    SF_CHECK(n < 0 || n == 1, "%s: expected one element",
             DescribeInputShape(context, slot));
  }
  const VarInfo& q = context.Input("Q");
  VarInfo out;
  out.dtype = q.dtype;
  AttentionInputs inputs;
  for (const auto& [slot, dims] :
       {std::pair<const char*, Dims*>{"Q", &inputs.q},
        {"K", &inputs.k},
        {"V", &inputs.v}}) {
    const VarInfo& info = context.Input(slot);
    if (!info.has_dims) return out;
    *dims = info.dims;
  }
  if (context.HasInput("Mask")) {
    const VarInfo& mask = context.Input("Mask");
    if (!mask.has_dims) return out;
    inputs.has_mask = true;
    inputs.mask = mask.dims;
  }
  inputs.transpose_k = context.attrs().Get<bool>("transpose_k");
  inputs.seq_first = context.attrs().Get<bool>("seq_first");
  SF_ASSIGN_OR_RETURN(out.dims,
                      AttentionOutDims(inputs, [&](absl::string_view slot) {
                        return DescribeInputShape(context, slot);
                      }));
  out.has_dims = true;
  return out;
}

absl::Status InferAttention(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, AttentionOutInfo(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

AttentionShape ShapeOf(const KernelContext& context) {
  AttentionInputs inputs;
  inputs.q = context.Input("Q").dims();
  inputs.k = context.Input("K").dims();
  inputs.v = context.Input("V").dims();
  inputs.has_mask = context.HasInput("Mask");
  if (inputs.has_mask) inputs.mask = context.Input("Mask").dims();
  inputs.transpose_k = context.attrs().Get<bool>("transpose_k");
  inputs.seq_first = context.attrs().Get<bool>("seq_first");
  return MakeAttentionShape(inputs);
}

// The attribute times Scale over Divisor. Their one element is checked
// here too: a parameter's rank may be unknown at Prepare.
template <typename T>
absl::StatusOr<T> ScaleOf(const KernelContext& context) {
  T scale = static_cast<T>(context.attrs().Get<float>("scale"));
  for (const char* slot : {"Scale", "Divisor"}) {
    if (!context.HasInput(slot)) continue;
    const Tensor& factor = context.Input(slot);
    SF_CHECK(factor.numel() == 1,
             "input \"%s\" (variable \"%s\") has shape %s: expected one "
             "element",
             slot, context.InputName(slot), DimsToString(factor.dims()));
    const T value = factor.data<T>()[0];
    scale = slot[0] == 'S' ? scale * value : scale / value;
  }
  return scale;
}

template <typename T>
const T* MaskOf(const KernelContext& context) {
  return context.HasInput("Mask") ? context.Input("Mask").data<T>() : nullptr;
}

template <typename T>
absl::Status AttentionKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const T scale, ScaleOf<T>(context));
  return AttentionForward<T>(
      ShapeOf(context), scale, context.Input("Q").data<T>(),
      context.Input("K").data<T>(), context.Input("V").data<T>(),
      MaskOf<T>(context), context.Output("Out")->data<T>());
}

absl::Status InferAttentionGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, AttentionOutInfo(context));
  for (const char* slot : {"Out", "Out@GRAD"}) {
    const VarInfo& given = context.Input(slot);
    bool same = given.dtype == out.dtype;
    if (given.has_dims && out.has_dims) {
      same = same && given.dims.size() == out.dims.size();
      for (size_t d = 0; same && d < out.dims.size(); ++d) {
        same = given.dims[d] < 0 || out.dims[d] < 0 ||
               given.dims[d] == out.dims[d];
      }
    }
    SF_CHECK(same, "%s: expected %s %s, the forward output",
             DescribeInputShape(context, slot), DataTypeName(out.dtype),
             out.has_dims ? DimsToString(out.dims) : "[?]");
  }
  for (const char* slot : kInputs) {
    const std::string grad = GradName(slot);
    if (!context.HasOutput(grad)) continue;
    SF_CHECK(context.HasInput(slot),
             "output \"%s\" (variable \"%s\") needs input \"%s\" for its shape",
             grad, context.OutputName(grad), slot);
    context.SetOutput(grad, context.Input(slot));
  }
  return absl::OkStatus();
}

template <typename T>
T* GradOf(const KernelContext& context, const char* slot) {
  const std::string grad = GradName(slot);
  return context.HasOutput(grad) ? context.Output(grad)->data<T>() : nullptr;
}

template <typename T>
absl::Status AttentionGradKernel(KernelContext& context) {
  const bool scale_grads =
      context.HasOutput("Scale@GRAD") || context.HasOutput("Divisor@GRAD");
  SF_ASSIGN_OR_RETURN(const T scale, ScaleOf<T>(context));
  T total_scale_grad = 0;
  SF_RETURN_IF_ERROR(AttentionBackward<T>(
      ShapeOf(context), scale, context.Input("Q").data<T>(),
      context.Input("K").data<T>(), context.Input("V").data<T>(),
      MaskOf<T>(context), context.Input("Out").data<T>(),
      context.Input("Out@GRAD").data<T>(), GradOf<T>(context, "Q"),
      GradOf<T>(context, "K"), GradOf<T>(context, "V"),
      GradOf<T>(context, "Mask"), scale_grads ? &total_scale_grad : nullptr));
  if (!scale_grads) return absl::OkStatus();
  // s = a * Scale / Divisor: ds/dScale = a / Divisor (= s / Scale, which
  // would divide by a zero Scale), ds/dDivisor = -s / Divisor.
  T divisor = 1;
  if (context.HasInput("Divisor")) {
    divisor = context.Input("Divisor").data<T>()[0];
  }
  if (T* grad = GradOf<T>(context, "Scale")) {
    grad[0] = total_scale_grad *
              static_cast<T>(context.attrs().Get<float>("scale")) / divisor;
  }
  if (T* grad = GradOf<T>(context, "Divisor")) {
    grad[0] = -total_scale_grad * scale / divisor;
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(attention)
    .Input("Q")
    .Input("K")
    .Input("V")
    .Input("Mask", /*optional=*/true)
    .Input("Scale", /*optional=*/true)
    .Input("Divisor", /*optional=*/true)
    .Output("Out")
    .Attr("scale", AttrType::kFloat, AttrValue(1.0f))
    .Attr("transpose_k", AttrType::kBool, AttrValue(false))
    .Attr("seq_first", AttrType::kBool, AttrValue(false))
    .Infer(InferAttention)
    .Grad(GradSpec("attention_grad")
              .ReadInput("Q")
              .ReadInput("K")
              .ReadInput("V")
              .ReadInput("Mask")
              .ReadInput("Scale")
              .ReadInput("Divisor")
              .ReadOutput("Out")
              .ReadOutputGrad("Out")
              .WriteInputGrad("Q")
              .WriteInputGrad("K")
              .WriteInputGrad("V")
              .WriteInputGrad("Mask")
              .WriteInputGrad("Scale")
              .WriteInputGrad("Divisor"))
    .Kernel(DeviceType::kCPU, kFloat32, &AttentionKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &AttentionKernel<double>);

SF_REGISTER_OP(attention_grad)
    .Input("Q")
    .Input("K")
    .Input("V")
    .Input("Mask", /*optional=*/true)
    .Input("Scale", /*optional=*/true)
    .Input("Divisor", /*optional=*/true)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("Q@GRAD", /*optional=*/true)
    .Output("K@GRAD", /*optional=*/true)
    .Output("V@GRAD", /*optional=*/true)
    .Output("Mask@GRAD", /*optional=*/true)
    .Output("Scale@GRAD", /*optional=*/true)
    .Output("Divisor@GRAD", /*optional=*/true)
    .Attr("scale", AttrType::kFloat, AttrValue(1.0f))
    .Attr("transpose_k", AttrType::kBool, AttrValue(false))
    .Attr("seq_first", AttrType::kBool, AttrValue(false))
    .Infer(InferAttentionGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &AttentionGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &AttentionGradKernel<double>);

}  // namespace scopeflow
