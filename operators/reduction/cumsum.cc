// cumsum and cumprod: running sums and products along one axis (ONNX CumSum
// and CumProd), inclusive or exclusive (each leaves out its own element),
// forward or reverse. The gradient of a sum running one way is the same sum
// of Out@GRAD running the other way, so cumsum's gradient op is cumsum
// itself with "reverse" flipped. cumprod_grad computes, for each element,
// the sum over the products it enters of Out@GRAD times the product of the
// others (exact where elements are 0, unlike Out / X), O(n^2) per line.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kCumsumDtypes[] = {kFloat32, kFloat64, kInt32, kInt64};

// The axis, from input "Axis" (a scalar, as ONNX feeds it) when it is bound
// or else attribute "axis", made non-negative for X's `rank`. `axis_value`
// is the Axis tensor (null: use the attribute).
absl::StatusOr<int> CumsumAxis(const Tensor* axis_value,
                               const std::string& axis_var,
                               const Attributes& attrs, int rank) {
  int64_t axis = attrs.Get<int32_t>("axis");
  std::string origin = "attribute \"axis\"";
  if (axis_value != nullptr) {
    SF_CHECK((axis_value->dtype() == kInt32 || axis_value->dtype() == kInt64) &&
                 axis_value->numel() == 1 && axis_value->rank() <= 1,
             "input \"Axis\" (variable \"%s\") is %s: expected one int32 or "
             "int64 element",
             axis_var, axis_value->DebugString());
    SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(*axis_value));
    axis =
        host.dtype() == kInt32 ? *host.data<int32_t>() : *host.data<int64_t>();
    origin = absl::StrFormat("input \"Axis\" (variable \"%s\")", axis_var);
  }
  SF_CHECK(rank > 0, "input \"X\" is a scalar: expected rank 1 or more");
  SF_CHECK(axis >= -rank && axis < rank,
           "%s = %d is out of range for input \"X\" of rank %d (expected "
           "[%d, %d))",
           origin, axis, rank, -rank, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::Status InferCumsum(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kCumsumDtypes));
  const VarInfo& x = context.Input("X");
  if (context.HasInput("Axis")) {
    const VarInfo& axis = context.Input("Axis");
    SF_CHECK(axis.dtype == kInt32 || axis.dtype == kInt64,
             "input \"Axis\" (variable \"%s\") has dtype %s: expected int32 "
             "or int64",
             context.InputName("Axis"), DataTypeName(axis.dtype));
    SF_CHECK(!axis.has_dims || axis.dims.empty() ||
                 (axis.dims.size() == 1 && axis.dims[0] <= 1),
             "input \"Axis\" (variable \"%s\") has shape %s: expected a "
             "scalar",
             context.InputName("Axis"), DimsToString(axis.dims));
  }
  if (x.has_dims) {
    const Tensor* axis_value = context.InputValue("Axis");
    if (!context.HasInput("Axis") || axis_value != nullptr) {
      absl::StatusOr<int> axis = CumsumAxis(
          axis_value, context.HasInput("Axis") ? context.InputName("Axis") : "",
          context.attrs(), static_cast<int>(x.dims.size()));
      if (!axis.ok()) {
        return absl::Status(axis.status().code(),
                            absl::StrCat(axis.status().message(), ", for ",
                                         DescribeInputShape(context, "X")));
      }
    }
  }
  context.SetOutput("Out", x);
  return absl::OkStatus();
}

struct Sum {
  template <typename T>
  static constexpr T kIdentity = T(0);
  template <typename T>
  static T Combine(T a, T b) {
    return a + b;
  }
};

struct Product {
  template <typename T>
  static constexpr T kIdentity = T(1);
  template <typename T>
  static T Combine(T a, T b) {
    return a * b;
  }
};

// The axis of the kernel's inputs, as CumsumAxis.
absl::StatusOr<int> KernelAxis(const KernelContext& context, int rank) {
  const Tensor* axis_value =
      context.HasInput("Axis") ? &context.Input("Axis") : nullptr;
  return CumsumAxis(axis_value,
                    context.HasInput("Axis") ? context.InputName("Axis") : "",
                    context.attrs(), rank);
}

template <typename T, typename Op = Sum>
absl::Status CumsumKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const int axis, KernelAxis(context, x.rank()));
  const bool exclusive = context.attrs().Get<bool>("exclusive");
  const bool reverse = context.attrs().Get<bool>("reverse");
  const AxisSplit split = SplitAtAxis(x.dims(), axis);
  if (x.numel() == 0) return absl::OkStatus();
  const T* src = x.data<T>();
  T* dst = out->data<T>();
  // One running sum per inner index, so the rows are read in order.
  std::vector<T> sums(split.inner);
  for (int64_t o = 0; o < split.outer; ++o) {
    std::fill(sums.begin(), sums.end(), Op::template kIdentity<T>);
    for (int64_t step = 0; step < split.size; ++step) {
      const int64_t j = reverse ? split.size - 1 - step : step;
      const int64_t row = (o * split.size + j) * split.inner;
      for (int64_t i = 0; i < split.inner; ++i) {
        const T value = src[row + i];
        if (exclusive) {
          dst[row + i] = sums[i];
          sums[i] = Op::Combine(sums[i], value);
        } else {
          sums[i] = Op::Combine(sums[i], value);
          dst[row + i] = sums[i];
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status InferCumprodGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  if (context.HasOutput("X@GRAD")) {
    context.SetOutput("X@GRAD", context.Input("X"));
  }
  return absl::OkStatus();
}

// X@GRAD of cumprod. In scan order (reversed for "reverse"), Out[p] is the
// product of X[r] for r <= p (r < p when exclusive), so
//   X@GRAD[q] = sum over p whose product holds q of
//               Out@GRAD[p] * (the product of its X[r], r != q),
// each such product being the one of X[r < q] times X[q < r <= p] (p - 1
// when exclusive), extended one element per step of p.
template <typename T>
absl::Status CumprodGradKernel(KernelContext& context) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const Tensor& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const int axis, KernelAxis(context, x.rank()));
  const bool exclusive = context.attrs().Get<bool>("exclusive");
  const bool reverse = context.attrs().Get<bool>("reverse");
  const AxisSplit split = SplitAtAxis(x.dims(), axis);
  T* dx = context.Output("X@GRAD")->data<T>();
  if (x.numel() == 0) return absl::OkStatus();
  const T* src = x.data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  const int64_t n = split.size;
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t i = 0; i < split.inner; ++i) {
      // Element p of the line in scan order.
      auto at = [&](int64_t p) {
        return (o * n + (reverse ? n - 1 - p : p)) * split.inner + i;
      };
      T before = T(1);  // The product of X[r < q].
      for (int64_t q = 0; q < n; ++q) {
        const int64_t first = exclusive ? q + 1 : q;
        T product = before;
        T sum = T(0);
        for (int64_t p = first; p < n; ++p) {
          if (p > first) product *= src[at(exclusive ? p - 1 : p)];
          sum += g[at(p)] * product;
        }
        dx[at(q)] = sum;
        before *= src[at(q)];
      }
    }
  }
  return absl::OkStatus();
}

// X@GRAD = cumsum(Out@GRAD) along the same axis, as exclusive, running the
// other way: Out[j] sums X[i] for i up to j, so X[i] feeds every Out[j]
// from i on.
absl::Status MakeCumsumGrad(GradOpContext& grad) {
  const std::vector<std::string> x_grad = grad.InputGrad("X");
  if (x_grad.empty() || x_grad[0].empty()) return absl::OkStatus();
  OpDef& op = grad.AddOp("cumsum");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetInput(op, "Axis", grad.Input("Axis"));
  GradOpContext::SetOutput(op, "Out", x_grad);
  bool reverse = false;
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() == "reverse") {
      reverse = attr.b();
    } else {
      *op.add_attrs() = attr;
    }
  }
  GradOpContext::SetAttr(op, "reverse", AttrValue(!reverse));
  return absl::OkStatus();
}

}  // namespace

// The axis comes from input "Axis" when bound (ONNX's form), else from
// attribute "axis".
SF_REGISTER_OP(cumsum)
    .Input("X")
    .Input("Axis", /*optional=*/true)
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Attr("exclusive", AttrType::kBool, AttrValue(false))
    .Attr("reverse", AttrType::kBool, AttrValue(false))
    .Infer(InferCumsum)
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeCumsumGrad))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &CumsumKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &CumsumKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &CumsumKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &CumsumKernel<int64_t>);

// As cumsum; the gradient is float32 and float64 only.
SF_REGISTER_OP(cumprod)
    .Input("X")
    .Input("Axis", /*optional=*/true)
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Attr("exclusive", AttrType::kBool, AttrValue(false))
    .Attr("reverse", AttrType::kBool, AttrValue(false))
    .Infer(InferCumsum)
    .Grad(GradSpec("cumprod_grad")
              .ReadInput("X")
              .ReadInput("Axis")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &CumsumKernel<float, Product>)
    .Kernel(DeviceType::kCPU, kFloat64, &CumsumKernel<double, Product>)
    .Kernel(DeviceType::kCPU, kInt32, &CumsumKernel<int32_t, Product>)
    .Kernel(DeviceType::kCPU, kInt64, &CumsumKernel<int64_t, Product>);

SF_REGISTER_OP(cumprod_grad)
    .Input("X")
    .Input("Axis", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(0))
    .Attr("exclusive", AttrType::kBool, AttrValue(false))
    .Attr("reverse", AttrType::kBool, AttrValue(false))
    .Infer(InferCumprodGrad)
    .KernelDtypeFromInput("X")
    .Kernel(DeviceType::kCPU, kFloat32, &CumprodGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &CumprodGradKernel<double>);

}  // namespace scopeflow
