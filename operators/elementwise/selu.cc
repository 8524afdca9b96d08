// selu: Out = gamma * X for X > 0, gamma * alpha * (exp(X) - 1) otherwise
// (ONNX Selu; the defaults are its self-normalizing constants). Float32 and
// float64.
//
// Gradient selu_grad reads X: X@GRAD = Out@GRAD * gamma for X > 0,
// Out@GRAD * gamma * alpha * exp(X) otherwise.
#include <cmath>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/vector_loops.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// ONNX's defaults, float32 as ONNX writes them.
constexpr float kAlpha = 1.67326319217681884765625f;
constexpr float kGamma = 1.05070102214813232421875f;

template <typename T>
struct SeluOp {
  T alpha;
  T gamma;
  T operator()(T x) const {
    return x > T{0} ? gamma * x : gamma * alpha * (std::exp(x) - T{1});
  }
};

template <typename T>
SeluOp<T> SeluFrom(const Attributes& attrs) {
  return {static_cast<T>(attrs.Get<float>("alpha")),
          static_cast<T>(attrs.Get<float>("gamma"))};
}

absl::Status InferSelu(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  return SameAsInput()(context);
}

template <typename T>
absl::Status SeluKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  T* out = context.Output("Out")->data<T>();
  const SeluOp<T> op = SeluFrom<T>(context.attrs());
  ParallelFor(x.numel(), kElementsWorthAThread,
              [&](int64_t begin, int64_t end) {
                elementwise::MapInto(in + begin, out + begin, end - begin, op);
              });
  return absl::OkStatus();
}

template <typename T>
absl::Status SeluGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  const T* xs = x.data<T>();
  const T* gs = context.Input("Out@GRAD").data<T>();
  T* dx = context.Output("X@GRAD")->data<T>();
  const SeluOp<T> op = SeluFrom<T>(context.attrs());
  ParallelFor(
      x.numel(), kElementsWorthAThread, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const T slope =
              xs[i] > T{0} ? op.gamma : op.gamma * op.alpha * std::exp(xs[i]);
          dx[i] = gs[i] * slope;
        }
      });
  return absl::OkStatus();
}

absl::Status CheckSeluGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Out@GRAD"));
  const VarInfo& x = context.Input("X");
  const VarInfo& g = context.Input("Out@GRAD");
  SF_CHECK(!x.has_dims || !g.has_dims || x.dims == g.dims,
           "inputs \"X\" (variable \"%s\") and \"Out@GRAD\" (variable \"%s\") "
           "must have one shape",
           context.InputName("X"), context.InputName("Out@GRAD"));
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", x);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(selu)
    .Input("X")
    .Output("Out")
    .Attr("alpha", AttrType::kFloat, AttrValue(kAlpha))
    .Attr("gamma", AttrType::kFloat, AttrValue(kGamma))
    .Infer(InferSelu)
    .Grad(GradSpec("selu_grad")
              .ReadInput("X")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &SeluKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &SeluKernel<double>);

SF_REGISTER_OP(selu_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("alpha", AttrType::kFloat, AttrValue(kAlpha))
    .Attr("gamma", AttrType::kFloat, AttrValue(kGamma))
    .Infer(CheckSeluGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &SeluGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &SeluGradKernel<double>);

}  // namespace scopeflow
