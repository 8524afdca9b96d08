// Comparisons and selection with numpy-style broadcasting: equal, less,
// greater, less_equal, greater_equal (inputs "X" and "Y" of one dtype, bool
// output "Out"; every comparison with NaN but not equal is false) and where
// (Out = Condition ? X : Y). The comparisons take float32, float64 and every
// integer type (equal also bool); where takes every dtype.
//
// The comparisons have no gradient. where's gradient, where_grad, passes
// Out@GRAD to X where Condition holds and to Y elsewhere, each summed over
// the dimensions along which its input was broadcast; Condition gets none.
#include <cstdint>

#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/grad_util.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct Equal {
  template <typename T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};

struct Less {
  template <typename T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};

struct Greater {
  template <typename T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};

struct LessEqual {
  template <typename T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};

struct GreaterEqual {
  template <typename T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};

struct Select {
  template <typename T>
  T operator()(bool condition, T a, T b) const {
    return condition ? a : b;
  }
};

absl::Status InferCompare(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::InferBroadcast(context, {"X", "Y"}, kBool);
}

template <typename T, typename Op>
absl::Status CompareKernel(KernelContext& context) {
  elementwise::BroadcastBinary<T, bool, Op>(
      context.Input("X"), context.Input("Y"), context.Output("Out"));
  return absl::OkStatus();
}

absl::Status InferWhere(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "Condition", kBool));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::InferBroadcast(context, {"Condition", "X", "Y"},
                                     context.Input("X").dtype);
}

template <typename T>
absl::Status WhereKernel(KernelContext& context) {
  elementwise::BroadcastTernary<bool, T, T, Select>(
      context.Input("Condition"), context.Input("X"), context.Input("Y"),
      context.Output("Out"));
  return absl::OkStatus();
}

absl::Status CheckWhereGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "Condition", kBool));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::CheckBroadcastGrad(context, {"X", "Y", "Condition"});
}

template <typename T>
absl::Status WhereGradKernel(KernelContext& context) {
  const Tensor& condition = context.Input("Condition");
  const Tensor& g = context.Input("Out@GRAD");
  const bool* cs = condition.data<bool>();
  const T* gs = g.data<T>();
  // Each input's gradient reduced over the broadcast of it and Condition
  // (the other input may widen the output further: g has the full shape).
  if (context.HasOutput("X@GRAD")) {
    elementwise::ReduceBroadcastGrad<T>(
        g.dims(), context.Input("X").dims(), condition.dims(),
        context.Output("X@GRAD")->data<T>(),
        [&](int64_t o, int64_t, int64_t c) { return cs[c] ? gs[o] : T{0}; });
  }
  if (context.HasOutput("Y@GRAD")) {
    elementwise::ReduceBroadcastGrad<T>(
        g.dims(), context.Input("Y").dims(), condition.dims(),
        context.Output("Y@GRAD")->data<T>(),
        [&](int64_t o, int64_t, int64_t c) { return cs[c] ? T{0} : gs[o]; });
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(equal)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferCompare)
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) {
               return &CompareKernel<typename decltype(t)::type, Equal>;
             })
    .Kernel(DeviceType::kCPU, kBool, &CompareKernel<bool, Equal>);

SF_REGISTER_OP(less)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferCompare)
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &CompareKernel<typename decltype(t)::type, Less>;
    });

SF_REGISTER_OP(greater)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferCompare)
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &CompareKernel<typename decltype(t)::type, Greater>;
    });

SF_REGISTER_OP(less_equal)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferCompare)
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &CompareKernel<typename decltype(t)::type, LessEqual>;
    });

SF_REGISTER_OP(greater_equal)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferCompare)
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &CompareKernel<typename decltype(t)::type, GreaterEqual>;
    });

// The kernel is chosen by X's dtype; Condition is bool.
SF_REGISTER_OP(where)
    .Input("Condition")
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferWhere)
    .Grad(GradSpec("where_grad")
              .ReadInput("Condition")
              .ReadInput("X")
              .ReadInput("Y")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X")
              .WriteInputGrad("Y"))
    .KernelDtypeFromInput("X")
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto t) { return &WhereKernel<typename decltype(t)::type>; });

// The kernel is chosen by Out@GRAD's dtype (Condition, the first input, is
// bool).
SF_REGISTER_OP(where_grad)
    .Input("Condition")
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(elementwise::CheckThenGradsLike(CheckWhereGrad, {"X", "Y"}))
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &WhereGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &WhereGradKernel<double>);

}  // namespace scopeflow
