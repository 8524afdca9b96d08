// Piecewise-constant ops of one input "X" with an output "Out" of its dtype
// and shape: sign (float32, float64, int32, int64), and floor, ceil and
// round (float32, float64; round takes halves to the even neighbour, as
// ONNX Round and numpy do).
//
// Each is constant between its jumps, so its derivative is zero wherever it
// is defined (everywhere but at the jumps, where none exists). The gradient
// maker emits X@GRAD = 0 of X's shape, as torch does, so that a loss
// reached only through one of them still has a (zero) gradient instead of
// backward refusing the variable.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/vector_loops.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace {

// -1, 0 or 1 by the sign of a; a float zero keeps its sign bit and NaN
// stays NaN (numpy's sign).
struct Sign {
  template <typename T>
  T operator()(T a) const {
    if (a > T{0}) return T{1};
    if (a < T{0}) return T{-1};
    return a;
  }
};

struct Floor {
  template <typename T>
  T operator()(T a) const {
    return std::floor(a);
  }
};

struct Ceil {
  template <typename T>
  T operator()(T a) const {
    return std::ceil(a);
  }
};

// std::nearbyint rounds in the current rounding mode, round-to-nearest-even
// unless a caller changed it (nothing in scopeflow does); unlike std::round
// (halves away from zero) it matches ONNX Round.
struct RoundHalfEven {
  template <typename T>
  T operator()(T a) const {
    return std::nearbyint(a);
  }
};

template <typename T, typename Op>
absl::Status RoundingKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  T* out = context.Output("Out")->data<T>();
  ParallelFor(
      x.numel(), kElementsWorthAThread, [&](int64_t begin, int64_t end) {
        elementwise::MapInto(in + begin, out + begin, end - begin, Op());
      });
  return absl::OkStatus();
}

// X@GRAD = 0 with Out@GRAD's shape and dtype (X's).
absl::Status MakeZeroGrad(GradOpContext& grad) {
  const std::vector<std::string> dx = grad.InputGrad("X");
  if (dx.empty() || dx[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("fill_any_like");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", dx);
  GradOpContext::SetAttr(op, "value", AttrValue(0.0f));
  return absl::OkStatus();
}

GradSpec ZeroGradSpec() {
  return GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
      MakeZeroGrad);
}

}  // namespace

SF_REGISTER_OP(sign)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Grad(ZeroGradSpec())
    .Kernel(DeviceType::kCPU, kFloat32, &RoundingKernel<float, Sign>)
    .Kernel(DeviceType::kCPU, kFloat64, &RoundingKernel<double, Sign>)
    .Kernel(DeviceType::kCPU, kInt32, &RoundingKernel<int32_t, Sign>)
    .Kernel(DeviceType::kCPU, kInt64, &RoundingKernel<int64_t, Sign>);

SF_REGISTER_OP(floor)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Grad(ZeroGradSpec())
    .Kernel(DeviceType::kCPU, kFloat32, &RoundingKernel<float, Floor>)
    .Kernel(DeviceType::kCPU, kFloat64, &RoundingKernel<double, Floor>);

SF_REGISTER_OP(ceil)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Grad(ZeroGradSpec())
    .Kernel(DeviceType::kCPU, kFloat32, &RoundingKernel<float, Ceil>)
    .Kernel(DeviceType::kCPU, kFloat64, &RoundingKernel<double, Ceil>);

SF_REGISTER_OP(round)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Grad(ZeroGradSpec())
    .Kernel(DeviceType::kCPU, kFloat32, &RoundingKernel<float, RoundHalfEven>)
    .Kernel(DeviceType::kCPU, kFloat64, &RoundingKernel<double, RoundHalfEven>);

}  // namespace scopeflow
