// prelu: Out = X where X >= 0, Slope * X below (ONNX PRelu), with Slope
// broadcast to X's shape (unidirectionally: Out has X's shape). Float32
// and float64.
//
// Gradient prelu_grad: X@GRAD = Out@GRAD * (X < 0 ? Slope : 1) and
// Slope@GRAD = Out@GRAD * (X < 0 ? X : 0) summed over Slope's broadcast.
// At X = 0 the one-sided derivatives differ; the kernel takes the right
// one (1 for X, 0 for Slope), as torch does.
#include <cstdint>

#include "absl/strings/str_join.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct PRelu {
  template <typename T>
  T operator()(T x, T slope) const {
    return x < T{0} ? slope * x : x;
  }
};

struct PReluGrad {
  template <typename T>
  T dx(T x, T slope, T g) const {
    return x < T{0} ? slope * g : g;
  }
  template <typename T>
  T dy(T x, T, T g) const {
    return x < T{0} ? x * g : T{0};
  }
};

absl::Status InferPRelu(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", {kFloat32, kFloat64}));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Slope"));
  SF_RETURN_IF_ERROR(elementwise::InferBroadcast(context, {"X", "Slope"},
                                                 context.Input("X").dtype));
  // Slope may not widen X: the broadcast shape must be X's.
  const VarInfo& x = context.Input("X");
  const VarInfo& slope = context.Input("Slope");
  if (x.has_dims && slope.has_dims) {
    bool widens = slope.dims.size() > x.dims.size();
    for (size_t i = 0; !widens && i < slope.dims.size(); ++i) {
      const int64_t s = slope.dims[slope.dims.size() - 1 - i];
      const int64_t d = x.dims[x.dims.size() - 1 - i];
      widens = s > 1 && d >= 0 && s != d;
    }
    SF_CHECK(!widens,
             "input \"Slope\" (variable \"%s\", shape [%s]) must broadcast to "
             "the shape of \"X\" (variable \"%s\", shape [%s])",
             context.InputName("Slope"), absl::StrJoin(slope.dims, ", "),
             context.InputName("X"), absl::StrJoin(x.dims, ", "));
    context.SetOutput("Out", VarInfo{x.dtype, x.dims, true});
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status PReluKernel(KernelContext& context) {
  elementwise::BroadcastBinary<T, T, PRelu>(
      context.Input("X"), context.Input("Slope"), context.Output("Out"));
  return absl::OkStatus();
}

absl::Status CheckPReluGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Slope"));
  return elementwise::CheckBroadcastGrad(context, {"X", "Slope"});
}

template <typename T>
absl::Status PReluGradKernel(KernelContext& context) {
  elementwise::BroadcastBinaryGrad<T, PReluGrad>(
      context.Input("X"), context.Input("Slope"), context.Input("Out@GRAD"),
      context.HasOutput("X@GRAD") ? context.Output("X@GRAD") : nullptr,
      context.HasOutput("Slope@GRAD") ? context.Output("Slope@GRAD") : nullptr);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(prelu)
    .Input("X")
    .Input("Slope")
    .Output("Out")
    .Infer(InferPRelu)
    .Grad(GradSpec("prelu_grad")
              .ReadInput("X")
              .ReadInput("Slope")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Slope"))
    .Kernel(DeviceType::kCPU, kFloat32, &PReluKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PReluKernel<double>);

SF_REGISTER_OP(prelu_grad)
    .Input("X")
    .Input("Slope")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Slope@GRAD", /*optional=*/true)
    .Infer(elementwise::CheckThenGradsLike(CheckPReluGrad, {"X", "Slope"}))
    .Kernel(DeviceType::kCPU, kFloat32, &PReluGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PReluGradKernel<double>);

}  // namespace scopeflow
