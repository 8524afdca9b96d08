// Binary arithmetic with numpy-style broadcasting: add, sub, mul, div, pow,
// max, min. Inputs "X" and "Y" of one dtype, output "Out" of that dtype and
// the broadcast shape.
//
// Integer add, sub, mul and the negation in div wrap around (two's
// complement) instead of overflowing; integer div truncates toward zero and
// a zero divisor is an error. Float max and min propagate NaN.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/arithmetic.h"
#include "operators/elementwise/broadcast.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using elementwise::Add;
using elementwise::Mul;
using elementwise::Neg;
using elementwise::Sub;

// Integer divisors are checked for zero before the loop.
struct Div {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      // The lowest value divided by -1 overflows (a hardware trap on x86):
      // negate with wrap-around instead.
      if (b == -1) return Neg()(a);
      return a / b;
    } else {
      return a / b;
    }
  }
};

struct Pow {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(std::pow(a, b));
  }
};

struct Max {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return a < b || b != b ? b : a;  // NaN in either gives NaN.
    } else {
      return a < b ? b : a;
    }
  }
};

struct Min {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return b < a || b != b ? b : a;
    } else {
      return b < a ? b : a;
    }
  }
};

absl::Status InferBinary(InferContext& context) {
  const VarInfo& x = context.Input("X");
  const VarInfo& y = context.Input("Y");
  // The common case, cheaply: one dtype, one known shape.
  if (x.dtype == y.dtype && x.has_dims && y.has_dims && x.dims == y.dims) {
    context.SetOutput("Out", x);
    return absl::OkStatus();
  }
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::InferBroadcast(context, {"X", "Y"}, x.dtype);
}

template <typename T, typename Op>
absl::Status BinaryKernel(KernelContext& context) {
  elementwise::BroadcastBinary<T, T, Op>(context.Input("X"), context.Input("Y"),
                                         context.Output("Out"));
  return absl::OkStatus();
}

template <typename T>
absl::Status DivKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  Tensor* out = context.Output("Out");
  if constexpr (std::is_integral_v<T>) {
    // Every element of Y takes part unless Out is empty.
    if (out->numel() > 0) {
      const T* divisors = y.data<T>();
      for (int64_t i = 0; i < y.numel(); ++i) {
        SF_CHECK(divisors[i] != 0,
                 "input \"Y\" (variable \"%s\", shape %s) holds 0 at element "
                 "%d: integer division by zero",
                 context.InputName("Y"), DimsToString(y.dims()), i);
      }
    }
  }
  elementwise::BroadcastBinary<T, T, Div>(x, y, out);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(add)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryKernel<float, Add>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryKernel<double, Add>)
    .Kernel(DeviceType::kCPU, kInt32, &BinaryKernel<int32_t, Add>)
    .Kernel(DeviceType::kCPU, kInt64, &BinaryKernel<int64_t, Add>);

SF_REGISTER_OP(sub)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryKernel<float, Sub>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryKernel<double, Sub>)
    .Kernel(DeviceType::kCPU, kInt32, &BinaryKernel<int32_t, Sub>)
    .Kernel(DeviceType::kCPU, kInt64, &BinaryKernel<int64_t, Sub>);

SF_REGISTER_OP(mul)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryKernel<float, Mul>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryKernel<double, Mul>)
    .Kernel(DeviceType::kCPU, kInt32, &BinaryKernel<int32_t, Mul>)
    .Kernel(DeviceType::kCPU, kInt64, &BinaryKernel<int64_t, Mul>);

SF_REGISTER_OP(div)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &DivKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DivKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &DivKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &DivKernel<int64_t>);

SF_REGISTER_OP(pow)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryKernel<float, Pow>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryKernel<double, Pow>);

SF_REGISTER_OP(max)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryKernel<float, Max>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryKernel<double, Max>)
    .Kernel(DeviceType::kCPU, kInt32, &BinaryKernel<int32_t, Max>)
    .Kernel(DeviceType::kCPU, kInt64, &BinaryKernel<int64_t, Max>);

SF_REGISTER_OP(min)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryKernel<float, Min>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryKernel<double, Min>)
    .Kernel(DeviceType::kCPU, kInt32, &BinaryKernel<int32_t, Min>)
    .Kernel(DeviceType::kCPU, kInt64, &BinaryKernel<int64_t, Min>);

}  // namespace scopeflow
