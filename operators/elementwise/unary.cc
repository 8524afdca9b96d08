// Ops of one input "X" with an output "Out" of its dtype and shape: the
// math functions exp, log, sqrt, erf, reciprocal, sin, cos (float32,
// float64; float32 exp, log and erf on vector_math.h's kernels); abs (also
// every integer type) and neg (also the signed integers), wrapping around
// at the lowest value; scale (float32, float64, int32, int64) and clip
// (float32, float64 and every integer type; its bounds as attributes or
// inputs).
//
// Gradients (float32, float64): "<op>_grad" ops for exp, log, sqrt, erf,
// reciprocal, sin, cos, abs and clip, reading X or Out and Out@GRAD and writing
// the optional X@GRAD; scale's gradient is a scale and neg's a neg of the
// output's gradient.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "framework/grad_spec.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/arithmetic.h"
#include "operators/elementwise/clip_bounds.h"
#include "operators/elementwise/grad_util.h"
#include "operators/elementwise/vector_loops.h"
#include "operators/elementwise/vector_math.h"
#include "operators/value_input.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

using elementwise::Add;
using elementwise::ClipBounds;
using elementwise::KernelClipBounds;
using elementwise::MapInto;
using elementwise::Mul;
using elementwise::Neg;

// Float32 runs vector_math.h's kernels, which vectorize; float64 calls
// libm.
struct Exp {
  SF_VECTOR_OP float operator()(float a) const { return vmath::Exp(a); }
  SF_VECTOR_OP double operator()(double a) const { return std::exp(a); }
};

struct Log {
  SF_VECTOR_OP float operator()(float a) const { return vmath::Log(a); }
  SF_VECTOR_OP double operator()(double a) const { return std::log(a); }
};

struct Sqrt {
  template <typename T>
  SF_VECTOR_OP T operator()(T a) const {
    return std::sqrt(a);
  }
};

struct Erf {
  SF_VECTOR_OP float operator()(float a) const { return vmath::Erf(a); }
  SF_VECTOR_OP double operator()(double a) const { return std::erf(a); }
};

// 1 / x, correctly rounded (a division); 1 / +-0 is +-inf.
struct Reciprocal {
  template <typename T>
  SF_VECTOR_OP T operator()(T a) const {
    return T(1) / a;
  }
};

struct Sin {
  template <typename T>
  SF_VECTOR_OP T operator()(T a) const {
    return std::sin(a);
  }
};

struct Cos {
  template <typename T>
  SF_VECTOR_OP T operator()(T a) const {
    return std::cos(a);
  }
};

struct Abs {
  template <typename T>
  SF_VECTOR_OP T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) {
      return a < 0 ? Neg()(a) : a;
    } else {
      return std::abs(a);
    }
  }
};

// Out = scale * X + bias.
template <typename T>
struct ScaleThenBias {
  T scale;
  T bias;
  SF_VECTOR_OP T operator()(T v) const { return Add()(Mul()(scale, v), bias); }
};

// Out = scale * (X + bias).
template <typename T>
struct BiasThenScale {
  T scale;
  T bias;
  SF_VECTOR_OP T operator()(T v) const { return Mul()(scale, Add()(v, bias)); }
};

// Out = X clamped to [lo, hi]; NaN stays NaN.
template <typename T>
struct ClipTo {
  T lo;
  T hi;
  SF_VECTOR_OP T operator()(T v) const {
    return v < lo ? lo : (hi < v ? hi : v);
  }
};

// The ops whose float loops vectorize (sin and cos call libm; sqrt does
// not, as the library is built without errno; float64 exp, log and erf
// call libm inside the loop).
template <typename T>
using VectorMap = std::variant<Exp, Log, Erf, Sqrt, Reciprocal, Abs, Neg,
                               ScaleThenBias<T>, BiasThenScale<T>, ClipTo<T>>;

// MapInto on the widest vectors the CPU has, for each float dtype
// (vector_loops.h says why these are not templates).
SF_WIDEST_VECTORS void MapWidest(const float* in, float* out, int64_t n,
                                 const VectorMap<float>& f) {
  MapInto(in, out, n, f);
}

SF_WIDEST_VECTORS void MapWidest(const double* in, double* out, int64_t n,
                                 const VectorMap<double>& f) {
  MapInto(in, out, n, f);
}

// Out[i] = f(X[i]); a float VectorMap on the widest vectors.
template <typename T, typename F>
absl::Status Map(KernelContext& context, F f) {
  return elementwise::MapKernel<T, VectorMap<T>>(
      context, f, [](auto... args) { MapWidest(args...); });
}

template <typename T, typename Op>
absl::Status UnaryKernel(KernelContext& context) {
  return Map<T>(context, Op());
}

// Whether `value` is a whole number that T holds.
template <typename T>
bool IsWhole(double value) {
  // Both limits are exact in double: 0 or -2^k, and 2^k.
  constexpr double kLowest = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double kBeyond =
      static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2;
  return std::trunc(value) == value && value >= kLowest && value < kBeyond;
}

// For integer X, the float attributes `names` must be whole numbers that
// X's dtype holds, so that the kernel computes exactly.
absl::Status CheckWholeAttrs(const InferContext& context,
                             std::initializer_list<const char*> names) {
  const VarInfo& x = context.Input("X");
  if (x.dtype != kInt32 && x.dtype != kInt64) return absl::OkStatus();
  for (const char* name : names) {
    const float value = context.attrs().Get<float>(name);
    SF_CHECK(
        x.dtype == kInt32 ? IsWhole<int32_t>(value) : IsWhole<int64_t>(value),
        "attribute \"%s\" = %g must be a whole number in the range of "
        "%s, the dtype of input \"X\" (variable \"%s\")",
        name, value, DataTypeName(x.dtype), context.InputName("X"));
  }
  return absl::OkStatus();
}

absl::Status InferScale(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckWholeAttrs(context, {"scale", "bias"}));
  context.SetOutput("Out", context.Input("X"));
  return absl::OkStatus();
}

// Out = scale * X + bias, or scale * (X + bias) if "bias_after_scale" is
// false.
template <typename T>
absl::Status ScaleKernel(KernelContext& context) {
  const T scale = static_cast<T>(context.attrs().Get<float>("scale"));
  const T bias = static_cast<T>(context.attrs().Get<float>("bias"));
  if (context.attrs().Get<bool>("bias_after_scale")) {
    return Map<T>(context, ScaleThenBias<T>{scale, bias});
  }
  return Map<T>(context, BiasThenScale<T>{scale, bias});
}

template <typename T>
bool ClipIsEmpty(float min, float max) {
  const auto [lo, hi] = ClipBounds<T>(min, max);
  return lo > hi;
}

// Whether [min, max] holds no value of integer dtype `dtype`; false for the
// other dtypes.
bool ClipIsEmptyFor(DataType dtype, float min, float max) {
  switch (dtype) {
    case kInt8:
      return ClipIsEmpty<int8_t>(min, max);
    case kInt16:
      return ClipIsEmpty<int16_t>(min, max);
    case kInt32:
      return ClipIsEmpty<int32_t>(min, max);
    case kInt64:
      return ClipIsEmpty<int64_t>(min, max);
    case kUInt8:
      return ClipIsEmpty<uint8_t>(min, max);
    case kUInt16:
      return ClipIsEmpty<uint16_t>(min, max);
    case kUInt32:
      return ClipIsEmpty<uint32_t>(min, max);
    case kUInt64:
      return ClipIsEmpty<uint64_t>(min, max);
    default:
      return false;
  }
}

absl::Status InferClip(InferContext& context) {
  const float min = context.attrs().Get<float>("min");
  const float max = context.attrs().Get<float>("max");
  SF_CHECK(min <= max, "attribute \"min\" (%g) must not exceed \"max\" (%g)",
           min, max);
  const VarInfo& x = context.Input("X");
  // Bound inputs replace the attributes; their values are checked by the
  // kernels, which see them.
  SF_RETURN_IF_ERROR(CheckScalarInput(context, "Min", x.dtype));
  SF_RETURN_IF_ERROR(CheckScalarInput(context, "Max", x.dtype));
  if (IsIntegerDataType(x.dtype)) {
    SF_CHECK(!ClipIsEmptyFor(x.dtype, min, max),
             "attributes \"min\" (%g) and \"max\" (%g) enclose no %s value, "
             "the dtype of input \"X\" (variable \"%s\")",
             min, max, DataTypeName(x.dtype), context.InputName("X"));
  }
  context.SetOutput("Out", x);
  return absl::OkStatus();
}

template <typename T>
absl::Status ClipKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const auto bounds, KernelClipBounds<T>(context));
  return Map<T>(context, ClipTo<T>{bounds.first, bounds.second});
}

// Gradients of the math functions: operator()(v, g) is dOut/dX times the
// gradient g flowing into Out, with v the element of input kReads ("X", or
// "Out" where the derivative is cheaper from the output).
struct ExpGrad {
  static constexpr char kReads[] = "Out";
  template <typename T>
  SF_VECTOR_OP T operator()(T out, T g) const {
    return g * out;
  }
};

struct LogGrad {
  static constexpr char kReads[] = "X";
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    return g / x;
  }
};

struct SqrtGrad {
  static constexpr char kReads[] = "Out";
  template <typename T>
  SF_VECTOR_OP T operator()(T out, T g) const {
    return g / (2 * out);
  }
};

// d erf(x) / dx = 2 / sqrt(pi) * exp(-x^2).
struct ErfGrad {
  static constexpr char kReads[] = "X";
  SF_VECTOR_OP float operator()(float x, float g) const {
    return g * 1.12837917f * vmath::Exp(-x * x);
  }
  SF_VECTOR_OP double operator()(double x, double g) const {
    return g * 1.12837916709551257390 * std::exp(-x * x);
  }
};

// d (1 / x) / dx = -1 / x^2 = -Out^2.
struct ReciprocalGrad {
  static constexpr char kReads[] = "Out";
  template <typename T>
  SF_VECTOR_OP T operator()(T out, T g) const {
    return -g * out * out;
  }
};

struct SinGrad {
  static constexpr char kReads[] = "X";
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    return g * std::cos(x);
  }
};

struct CosGrad {
  static constexpr char kReads[] = "X";
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    return -g * std::sin(x);
  }
};

// The sign of x times g; at 0, where abs has no derivative, 0 (sign(0), as
// in PyTorch). NaN stays NaN.
struct AbsGrad {
  static constexpr char kReads[] = "X";
  template <typename T>
  SF_VECTOR_OP T operator()(T x, T g) const {
    if (x > 0) return g;
    if (x < 0) return -g;
    return x == 0 ? T{0} : x;
  }
};

// The gradient passes where clip passed X through unchanged (lo <= x <= hi,
// and NaN), so at the bounds too; 0 where clip replaced X by a bound.
template <typename T>
struct ClipGrad {
  T lo, hi;
  SF_VECTOR_OP T operator()(T x, T g) const {
    // The negated comparisons of ClipTo, so that NaN passes as there.
    return !(x < lo) && !(hi < x) ? g : T{0};
  }
};

// The gradients whose loops vectorize (the others call libm).
template <typename T>
using VectorGrad = std::variant<ExpGrad, LogGrad, SqrtGrad, ErfGrad,
                                ReciprocalGrad, AbsGrad, ClipGrad<T>>;

// MapPairsInto on the widest vectors the CPU has, for each float dtype.
SF_WIDEST_VECTORS void MapGradWidest(const float* v, const float* g, float* out,
                                     int64_t n, const VectorGrad<float>& f) {
  elementwise::MapPairsInto(v, g, out, n, f);
}

SF_WIDEST_VECTORS void MapGradWidest(const double* v, const double* g,
                                     double* out, int64_t n,
                                     const VectorGrad<double>& f) {
  elementwise::MapPairsInto(v, g, out, n, f);
}

template <typename T, typename F>
absl::Status MapGrad(KernelContext& context, absl::string_view reads, F f) {
  return elementwise::MapGradKernel<T, VectorGrad<T>>(
      context, reads, f, [](auto... args) { MapGradWidest(args...); });
}

template <typename T, typename Grad>
absl::Status UnaryGradKernel(KernelContext& context) {
  return MapGrad<T>(context, Grad::kReads, Grad());
}

template <typename T>
absl::Status ClipGradKernel(KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const auto bounds, KernelClipBounds<T>(context));
  return MapGrad<T>(context, "X", ClipGrad<T>{bounds.first, bounds.second});
}

// The gradient op of a one-input op: reads input `reads` ("X" or "Out") and
// the output's gradient, writes X's.
GradSpec UnaryGradSpec(std::string grad_type, absl::string_view reads) {
  GradSpec spec(std::move(grad_type));
  if (reads == "X") {
    spec.ReadInput("X");
  } else {
    spec.ReadOutput("Out");
  }
  return spec.ReadOutputGrad("Out").WriteInputGrad("X");
}

// Out = scale * X + bias, or scale * (X + bias): either way X@GRAD is
// scale * Out@GRAD, a scale op with the same "scale" and no bias.
absl::Status MakeScaleGrad(GradOpContext& grad) {
  const std::vector<std::string> dx = grad.InputGrad("X");
  if (dx.empty() || dx[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("scale");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", dx);
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() == "scale") *op.add_attrs() = attr;
  }
  return absl::OkStatus();
}

// X@GRAD = -Out@GRAD.
absl::Status MakeNegGrad(GradOpContext& grad) {
  const std::vector<std::string> dx = grad.InputGrad("X");
  if (dx.empty() || dx[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("neg");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", dx);
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(exp)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("exp_grad", "Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Exp>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Exp>);

SF_REGISTER_OP(log)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("log_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Log>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Log>);

SF_REGISTER_OP(sqrt)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("sqrt_grad", "Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Sqrt>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Sqrt>);

SF_REGISTER_OP(erf)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("erf_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Erf>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Erf>);

SF_REGISTER_OP(reciprocal)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("reciprocal_grad", "Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Reciprocal>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Reciprocal>);

SF_REGISTER_OP(sin)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("sin_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Sin>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Sin>);

SF_REGISTER_OP(cos)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("cos_grad", "X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryKernel<float, Cos>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryKernel<double, Cos>);

SF_REGISTER_OP(abs)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(UnaryGradSpec("abs_grad", "X"))
    .Kernels(DeviceType::kCPU, NumberTypes(), [](auto t) {
      return &UnaryKernel<typename decltype(t)::type, Abs>;
    });

SF_REGISTER_OP(neg)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Infer(SameAsInput())
    .Grad(
        GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(MakeNegGrad))
    .Kernels(DeviceType::kCPU,
             TypeList<float, double, int8_t, int16_t, int32_t, int64_t>(),
             [](auto t) {
               return &UnaryKernel<typename decltype(t)::type, Neg>;
             });

// For integer X, "scale" and "bias" must be whole numbers in X's range, and
// the arithmetic wraps around.
SF_REGISTER_OP(scale)
    .Input("X")
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Attr("scale", AttrType::kFloat, AttrValue(1.0f))
    .Attr("bias", AttrType::kFloat, AttrValue(0.0f))
    .Attr("bias_after_scale", AttrType::kBool, AttrValue(true))
    .Infer(InferScale)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeScaleGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &ScaleKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ScaleKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &ScaleKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &ScaleKernel<int64_t>);

// Out = min(max(X, min), max). For integer X the bounds are rounded inward
// to whole numbers, which must leave at least one. Inputs "Min" and "Max"
// (one element of X's dtype), when bound, replace the attributes (absent:
// unbounded); clip_grad reads them too, and they get no gradient.
SF_REGISTER_OP(clip)
    .Input("X")
    .Input("Min", /*optional=*/true)
    .Input("Max", /*optional=*/true)
    .Output("Out")
    .Layout(LayoutRole::kElementwise)
    .Attr("min", AttrType::kFloat,
          AttrValue(-std::numeric_limits<float>::infinity()))
    .Attr("max", AttrType::kFloat,
          AttrValue(std::numeric_limits<float>::infinity()))
    .Infer(InferClip)
    .Grad(GradSpec("clip_grad")
              .ReadInput("X")
              .ReadInput("Min")
              .ReadInput("Max")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernels(DeviceType::kCPU, NumberTypes(),
             [](auto t) { return &ClipKernel<typename decltype(t)::type>; });

SF_REGISTER_OP(exp_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, ExpGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, ExpGrad>);

SF_REGISTER_OP(log_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, LogGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, LogGrad>);

SF_REGISTER_OP(sqrt_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, SqrtGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, SqrtGrad>);

SF_REGISTER_OP(erf_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, ErfGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, ErfGrad>);

SF_REGISTER_OP(reciprocal_grad)
    .Input("Out")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("Out"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, ReciprocalGrad>)
    .Kernel(DeviceType::kCPU, kFloat64,
            &UnaryGradKernel<double, ReciprocalGrad>);

SF_REGISTER_OP(sin_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, SinGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, SinGrad>);

SF_REGISTER_OP(cos_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, CosGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, CosGrad>);

SF_REGISTER_OP(abs_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Infer(elementwise::UnaryGradInfer("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &UnaryGradKernel<float, AbsGrad>)
    .Kernel(DeviceType::kCPU, kFloat64, &UnaryGradKernel<double, AbsGrad>);

// Gets clip's "min" and "max" (the gradient maker copies them) and its
// inputs "Min" and "Max".
SF_REGISTER_OP(clip_grad)
    .Input("X")
    .Input("Out@GRAD")
    .Input("Min", /*optional=*/true)
    .Input("Max", /*optional=*/true)
    .Output("X@GRAD", /*optional=*/true)
    .Attr("min", AttrType::kFloat,
          AttrValue(-std::numeric_limits<float>::infinity()))
    .Attr("max", AttrType::kFloat,
          AttrValue(std::numeric_limits<float>::infinity()))
    .Infer(elementwise::UnaryGradInfer("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &ClipGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ClipGradKernel<double>);

}  // namespace scopeflow
