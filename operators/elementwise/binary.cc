// Binary arithmetic with numpy-style broadcasting: add, sub, mul, div, pow,
// max, min. Inputs "X" and "Y" of one dtype, output "Out" of that dtype and
// the broadcast shape. Every op but pow takes float32, float64 and every
// integer type (int8 to int64, uint8 to uint64); pow takes float32,
// float64, int32 and int64; max and min also float16 (compared as float32).
//
// Integer add, sub, mul, pow and the negation in div wrap around (two's
// complement) instead of overflowing; integer div truncates toward zero and
// a zero divisor is an error. Integer pow with a negative exponent gives
// 1 / x^-y truncated toward zero (0 unless x is 1 or -1), and 0 to a
// negative power is an error. Float max and min propagate NaN. Float pow
// with a one-element exponent of 2, 3, -1, 0.5 or -0.5 (a constant in most
// models) runs a vectorized product, quotient or square root instead of
// libm's pow, with pow's results at +-0 and +-inf.
//
// Each has a gradient op "<op>_grad" (float32, float64): inputs X, Y and
// Out@GRAD, optional outputs X@GRAD and Y@GRAD, each summed over the
// dimensions along which its input was broadcast.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/arithmetic.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/grad_util.h"
#include "operators/elementwise/vector_loops.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

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
    if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) {
      // The lowest value divided by -1 overflows (a hardware trap on x86):
      // negate with wrap-around instead.
      if (b == -1) return Neg()(a);
      return static_cast<T>(a / b);
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

// x^y for the exponents with a cheaper form. Each gives libm's pow at every
// x, within 1 ulp where it rounds twice (x^3, x^-0.5).
struct Square {
  template <typename T>
  T operator()(T x) const {
    return x * x;
  }
};

struct Cube {
  template <typename T>
  T operator()(T x) const {
    return x * x * x;
  }
};

struct Inverse {
  template <typename T>
  T operator()(T x) const {
    return T(1) / x;
  }
};

// pow(-0, 0.5) is +0 (sqrt keeps the sign: adding +0 drops it) and
// pow(-inf, 0.5) is +inf (sqrt gives NaN).
struct SquareRoot {
  template <typename T>
  T operator()(T x) const {
    const T root = std::sqrt(x) + T(0);
    return x == -std::numeric_limits<T>::infinity() ? -x : root;
  }
};

// 1 / SquareRoot: pow(+-0, -0.5) is +inf, pow(-inf, -0.5) is +0.
struct InverseSquareRoot {
  template <typename T>
  T operator()(T x) const {
    return T(1) / SquareRoot()(x);
  }
};

using SpecialPow =
    std::variant<Square, Cube, Inverse, SquareRoot, InverseSquareRoot>;

// The SpecialPow for exponent y, if it has one.
template <typename T>
std::optional<SpecialPow> SpecialPowFor(T y) {
  if (y == T(2)) return Square();
  if (y == T(3)) return Cube();
  if (y == T(-1)) return Inverse();
  if (y == T(0.5)) return SquareRoot();
  if (y == T(-0.5)) return InverseSquareRoot();
  return std::nullopt;
}

// MapInto on the widest vectors the CPU has, for each float dtype
// (vector_loops.h says why these are not templates).
SF_WIDEST_VECTORS void SpecialPowWidest(const float* x, float* out, int64_t n,
                                        const SpecialPow& f) {
  elementwise::MapInto(x, out, n, f);
}

SF_WIDEST_VECTORS void SpecialPowWidest(const double* x, double* out, int64_t n,
                                        const SpecialPow& f) {
  elementwise::MapInto(x, out, n, f);
}

// Exact integer powers by repeated squaring, wrapping around as integer
// mul does. Sets `*zero_to_negative` where 0 meets a negative exponent.
struct IntPow {
  bool* zero_to_negative;

  template <typename T>
  T operator()(T x, T y) const {
    if (y < 0) {
      if (x == 1) return 1;
      if (x == -1) return (y & 1) != 0 ? -1 : 1;
      if (x == 0) *zero_to_negative = true;
      return 0;
    }
    T result = 1;
    for (T base = x; y > 0; y >>= 1) {
      if ((y & 1) != 0) result = Mul()(result, base);
      if (y > 1) base = Mul()(base, base);
    }
    return result;
  }
};

// Whether max(x, y) is y: a NaN in y propagates, and x wins ties. Max and
// max's gradient both decide by it, so the gradient flows to the input the
// forward op took. float16 compares as the float32 it stands for.
template <typename T>
bool MaxTakesY(T x, T y) {
  if constexpr (std::is_same_v<T, float16>) {
    return MaxTakesY(HalfToFloat(x), HalfToFloat(y));
  } else if constexpr (std::is_floating_point_v<T>) {
    return x < y || y != y;
  } else {
    return x < y;
  }
}

// Whether min(x, y) is y, likewise.
template <typename T>
bool MinTakesY(T x, T y) {
  if constexpr (std::is_same_v<T, float16>) {
    return MinTakesY(HalfToFloat(x), HalfToFloat(y));
  } else if constexpr (std::is_floating_point_v<T>) {
    return y < x || y != y;
  } else {
    return y < x;
  }
}

struct Max {
  template <typename T>
  T operator()(T a, T b) const {
    return MaxTakesY(a, b) ? b : a;  // NaN in either gives NaN.
  }
};

struct Min {
  template <typename T>
  T operator()(T a, T b) const {
    return MinTakesY(a, b) ? b : a;
  }
};

// The ops whose float rows vectorize (pow calls libm).
using VectorOp = std::variant<Add, Sub, Mul, Div, Max, Min>;

// BinaryRow on the widest vectors the CPU has, for each float dtype
// (vector_loops.h says why these are not templates).
SF_WIDEST_VECTORS void WidestRow(const float* x, bool x_step, const float* y,
                                 bool y_step, float* out, int64_t n,
                                 const VectorOp& op) {
  elementwise::BinaryRow(x, x_step, y, y_step, out, n, op);
}

SF_WIDEST_VECTORS void WidestRow(const double* x, bool x_step, const double* y,
                                 bool y_step, double* out, int64_t n,
                                 const VectorOp& op) {
  elementwise::BinaryRow(x, x_step, y, y_step, out, n, op);
}

// Out = op(X, Y), the rows of a float VectorOp through WidestRow.
template <typename T, typename Op>
void Broadcast(const Tensor& x, const Tensor& y, Tensor* out, Op op = Op()) {
  if constexpr (std::is_floating_point_v<T> &&
                elementwise::kHolds<Op, VectorOp>) {
    elementwise::BroadcastBinary<T, T>(
        x, y, out, op,
        [op](const T* a, bool a_step, const T* b, bool b_step, T* o,
             int64_t n) { WidestRow(a, a_step, b, b_step, o, n, op); });
  } else {
    elementwise::BroadcastBinary<T, T, Op>(x, y, out, op);
  }
}

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
  Broadcast<T, Op>(context.Input("X"), context.Input("Y"),
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
  Broadcast<T, Div>(x, y, out);
  return absl::OkStatus();
}

// Float pow; a one-element Y with a SpecialPow maps X through it (Out has
// X's elements in X's order, whatever ones Y's shape prepends).
template <typename T>
absl::Status PowKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  Tensor* out = context.Output("Out");
  if (y.numel() == 1 && out->numel() == x.numel()) {
    if (const std::optional<SpecialPow> special = SpecialPowFor(*y.data<T>())) {
      const T* in = x.data<T>();
      T* result = out->data<T>();
      ParallelFor(
          x.numel(), kElementsWorthAThread, [&](int64_t begin, int64_t end) {
            SpecialPowWidest(in + begin, result + begin, end - begin, *special);
          });
      return absl::OkStatus();
    }
  }
  Broadcast<T, Pow>(x, y, out);
  return absl::OkStatus();
}

template <typename T>
absl::Status IntPowKernel(KernelContext& context) {
  bool zero_to_negative = false;
  elementwise::BroadcastBinary<T, T, IntPow>(
      context.Input("X"), context.Input("Y"), context.Output("Out"),
      IntPow{&zero_to_negative});
  SF_CHECK(!zero_to_negative,
           "input \"X\" (variable \"%s\") holds 0 where input \"Y\" "
           "(variable \"%s\") holds a negative exponent: integer 0 has no "
           "negative power",
           context.InputName("X"), context.InputName("Y"));
  return absl::OkStatus();
}

// The gradients of the binary ops: dx and dy are d Out / d X and
// d Out / d Y at one element, times the gradient g flowing into Out.
struct AddGrad {
  template <typename T>
  T dx(T, T, T g) const {
    return g;
  }
  template <typename T>
  T dy(T, T, T g) const {
    return g;
  }
};

struct SubGrad {
  template <typename T>
  T dx(T, T, T g) const {
    return g;
  }
  template <typename T>
  T dy(T, T, T g) const {
    return -g;
  }
};

struct MulGrad {
  template <typename T>
  T dx(T, T y, T g) const {
    return g * y;
  }
  template <typename T>
  T dy(T x, T, T g) const {
    return g * x;
  }
};

struct DivGrad {
  template <typename T>
  T dx(T, T y, T g) const {
    return g / y;
  }
  // -g x / y^2, divided in two steps so that y^2 cannot overflow first.
  template <typename T>
  T dy(T x, T y, T g) const {
    return -g * (x / y) / y;
  }
};

// As in PyTorch, the gradients are 0 rather than NaN where a limit makes
// them so: d/dx where y = 0 (x^0 is constant, even at x = 0), and d/dy at
// x = 0 with y >= 0 (0^y is constant for y > 0). For x < 0, d/dy involves
// log(x) and is NaN.
struct PowGrad {
  template <typename T>
  T dx(T x, T y, T g) const {
    return y == 0 ? T{0} : g * y * std::pow(x, y - 1);
  }
  template <typename T>
  T dy(T x, T y, T g) const {
    return x == 0 && y >= 0 ? T{0} : g * std::pow(x, y) * std::log(x);
  }
};

// The gradient flows to the input max took, as MaxTakesY says.
struct MaxGrad {
  template <typename T>
  T dx(T x, T y, T g) const {
    return MaxTakesY(x, y) ? T{0} : g;
  }
  template <typename T>
  T dy(T x, T y, T g) const {
    return MaxTakesY(x, y) ? g : T{0};
  }
};

struct MinGrad {
  template <typename T>
  T dx(T x, T y, T g) const {
    return MinTakesY(x, y) ? T{0} : g;
  }
  template <typename T>
  T dy(T x, T y, T g) const {
    return MinTakesY(x, y) ? g : T{0};
  }
};

absl::Status CheckBinaryGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::CheckBroadcastGrad(context, {"X", "Y"});
}

// The gradients whose loops vectorize (pow's call libm).
using VectorGrad =
    std::variant<AddGrad, SubGrad, MulGrad, DivGrad, MaxGrad, MinGrad>;

// Both gradients of X, Y and Out of one shape, in one pass: dx[i] and dy[i]
// from x[i], y[i] and g[i].
template <typename T, typename Grad>
inline __attribute__((always_inline)) void SameShapeGrads(
    const T* x, const T* y, const T* g, T* dx, T* dy, int64_t n, Grad grad) {
  for (int64_t i = 0; i < n; ++i) {
    dx[i] = grad.dx(x[i], y[i], g[i]);
    dy[i] = grad.dy(x[i], y[i], g[i]);
  }
}

// SameShapeGrads with the VectorGrad that `grads` holds, on the widest
// vectors the CPU has, for each float dtype.
SF_WIDEST_VECTORS void SameShapeGradsWidest(const float* x, const float* y,
                                            const float* g, float* dx,
                                            float* dy, int64_t n,
                                            const VectorGrad& grads) {
  elementwise::VisitInline(
      grads, [&](auto grad) __attribute__((always_inline)) {
        SameShapeGrads(x, y, g, dx, dy, n, grad);
      });
}

SF_WIDEST_VECTORS void SameShapeGradsWidest(const double* x, const double* y,
                                            const double* g, double* dx,
                                            double* dy, int64_t n,
                                            const VectorGrad& grads) {
  elementwise::VisitInline(
      grads, [&](auto grad) __attribute__((always_inline)) {
        SameShapeGrads(x, y, g, dx, dy, n, grad);
      });
}

template <typename T, typename Grad>
absl::Status BinaryGradKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Tensor& y = context.Input("Y");
  const Tensor& g = context.Input("Out@GRAD");
  if constexpr (std::is_floating_point_v<T> &&
                elementwise::kHolds<Grad, VectorGrad>) {
    const int64_t n = g.numel();
    if (context.HasOutput("X@GRAD") && context.HasOutput("Y@GRAD") &&
        x.numel() == n && y.numel() == n) {
      const T* xs = x.data<T>();
      const T* ys = y.data<T>();
      const T* gs = g.data<T>();
      T* dx = context.Output("X@GRAD")->data<T>();
      T* dy = context.Output("Y@GRAD")->data<T>();
      ParallelFor(n, kElementsWorthAThread, [&](int64_t begin, int64_t end) {
        SameShapeGradsWidest(xs + begin, ys + begin, gs + begin, dx + begin,
                             dy + begin, end - begin, VectorGrad(Grad()));
      });
      return absl::OkStatus();
    }
  }
  elementwise::BroadcastBinaryGrad<T, Grad>(
      x, y, g, context.HasOutput("X@GRAD") ? context.Output("X@GRAD") : nullptr,
      context.HasOutput("Y@GRAD") ? context.Output("Y@GRAD") : nullptr);
  return absl::OkStatus();
}

// Every binary gradient op reads both inputs (for their shapes if not their
// values) and the output's gradient, and writes both inputs' gradients.
GradSpec BinaryGradSpec(std::string grad_type) {
  return GradSpec(std::move(grad_type))
      .ReadInput("X")
      .ReadInput("Y")
      .ReadOutputGrad("Out")
      .WriteInputGrad("X")
      .WriteInputGrad("Y");
}

InferFn InferBinaryGrad() {
  return elementwise::CheckThenGradsLike(CheckBinaryGrad, {"X", "Y"});
}

}  // namespace

SF_REGISTER_OP(add)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("add_grad"))
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &BinaryKernel<typename decltype(t)::type, Add>;
    });

SF_REGISTER_OP(sub)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("sub_grad"))
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &BinaryKernel<typename decltype(t)::type, Sub>;
    });

SF_REGISTER_OP(mul)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("mul_grad"))
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &BinaryKernel<typename decltype(t)::type, Mul>;
    });

SF_REGISTER_OP(div)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("div_grad"))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &DivKernel<typename decltype(t)::type>; });

SF_REGISTER_OP(pow)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("pow_grad"))
    .Kernel(DeviceType::kCPU, kFloat32, &PowKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &PowKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &IntPowKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &IntPowKernel<int64_t>);

SF_REGISTER_OP(max)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("max_grad"))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) {
               return &BinaryKernel<typename decltype(t)::type, Max>;
             })
    .Kernel(DeviceType::kCPU, kFloat16, &BinaryKernel<float16, Max>);

SF_REGISTER_OP(min)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBinary)
    .Grad(BinaryGradSpec("min_grad"))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) {
               return &BinaryKernel<typename decltype(t)::type, Min>;
             })
    .Kernel(DeviceType::kCPU, kFloat16, &BinaryKernel<float16, Min>);

SF_REGISTER_OP(add_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, AddGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, AddGrad>);

SF_REGISTER_OP(sub_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, SubGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, SubGrad>);

SF_REGISTER_OP(mul_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, MulGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, MulGrad>);

SF_REGISTER_OP(div_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, DivGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, DivGrad>);

SF_REGISTER_OP(pow_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, PowGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, PowGrad>);

SF_REGISTER_OP(max_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, MaxGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, MaxGrad>);

SF_REGISTER_OP(min_grad)
    .Input("X")
    .Input("Y")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Y@GRAD", /*optional=*/true)
    .Infer(InferBinaryGrad())
    .Kernel(DeviceType::kCPU, kFloat32, &BinaryGradKernel<float, MinGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &BinaryGradKernel<double, MinGrad>);

}  // namespace scopeflow
