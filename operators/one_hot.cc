// one_hot: ONNX's OneHot. Each index of "Indices" becomes a vector of
// "Depth" values along a new axis, all Values[0] ("off") but the one at the
// index, Values[1] ("on"). Indices in [-depth, 0) count from the end; any
// outside [-depth, depth) give an all-off vector, as ONNX says. The depth is
// an input's value, so Prepare leaves that dimension unknown. Gradients flow
// to "Values" only (the indices pick positions): the sums of Out@GRAD over
// the off and the on positions.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/value_input.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kNumberDtypes[] = {kFloat32, kFloat64, kInt32, kInt64};
constexpr DataType kValueDtypes[] = {kFloat32, kFloat64, kInt32, kInt64,
                                     kBool};

template <typename T>
double ElementAsDouble(const Tensor& tensor, int64_t i) {
  return static_cast<double>(tensor.data<T>()[i]);
}

// Element i of an int32, int64, float32 or float64 tensor on the host.
double NumberAt(const Tensor& tensor, int64_t i) {
  switch (tensor.dtype()) {
    case kInt32:
      return ElementAsDouble<int32_t>(tensor, i);
    case kInt64:
      return ElementAsDouble<int64_t>(tensor, i);
    case kFloat32:
      return ElementAsDouble<float>(tensor, i);
    default:
      return ElementAsDouble<double>(tensor, i);
  }
}

// The depth held by `depth` (variable `var`): a whole, non-negative number
// (a float depth is truncated, as ONNX's reference does).
absl::StatusOr<int64_t> DepthOf(const Tensor& depth, const std::string& var) {
  SF_CHECK(depth.numel() == 1 && depth.rank() <= 1,
           "input \"Depth\" (variable \"%s\") is %s: expected one element",
           var, depth.DebugString());
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(depth));
  const double value = NumberAt(host, 0);
  SF_CHECK(std::isfinite(value) && value >= 0 && value < 9.2e18,
           "input \"Depth\" (variable \"%s\") = %g: expected a non-negative "
           "number of classes",
           var, value);
  return static_cast<int64_t>(value);
}

// Attribute "axis" for an output of rank `out_rank` (Indices' rank + 1).
absl::StatusOr<int> OneHotAxis(const Attributes& attrs, int out_rank) {
  const int64_t axis = attrs.Get<int32_t>("axis");
  SF_CHECK(axis >= -out_rank && axis < out_rank,
           "attribute \"axis\" = %d is out of range for an output of rank %d "
           "(expected [%d, %d))",
           axis, out_rank, -out_rank, out_rank);
  return static_cast<int>(axis < 0 ? axis + out_rank : axis);
}

absl::Status InferOneHot(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Indices", kNumberDtypes));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Depth", kNumberDtypes));
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "Values", kValueDtypes));
  const VarInfo& depth = context.Input("Depth");
  SF_CHECK(!depth.has_dims || depth.dims.empty() ||
               (depth.dims.size() == 1 && depth.dims[0] <= 1),
           "%s: expected a scalar", DescribeInputShape(context, "Depth"));
  const VarInfo& values = context.Input("Values");
  SF_CHECK(!values.has_dims ||
               (values.dims.size() == 1 &&
                (values.dims[0] == 2 || values.dims[0] < 0)),
           "%s: expected [off_value, on_value], a 1-D tensor of 2 elements",
           DescribeInputShape(context, "Values"));
  const VarInfo& indices = context.Input("Indices");
  if (!indices.has_dims) {
    context.SetOutput("Out", VarInfo{values.dtype, {}, false});
    return absl::OkStatus();
  }
  const int out_rank = static_cast<int>(indices.dims.size()) + 1;
  absl::StatusOr<int> axis = OneHotAxis(context.attrs(), out_rank);
  if (!axis.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        axis.status().message(), ", for ", DescribeInputShape(context,
                                                              "Indices")));
  }
  int64_t classes = -1;
  if (const Tensor* value = context.InputValue("Depth"); value != nullptr) {
    SF_ASSIGN_OR_RETURN(classes, DepthOf(*value, context.InputName("Depth")));
  }
  Dims out = indices.dims;
  out.insert(out.begin() + *axis, classes);
  context.SetOutput("Out", 0, values.dtype, std::move(out));
  return absl::OkStatus();
}

// The position each index turns on: in [0, depth), or -1 for none.
absl::StatusOr<std::vector<int64_t>> OnPositions(const Tensor& indices,
                                                 int64_t depth) {
  SF_ASSIGN_OR_RETURN(const Tensor host, OnHost(indices));
  std::vector<int64_t> on(host.numel());
  for (int64_t i = 0; i < host.numel(); ++i) {
    const double value = NumberAt(host, i);
    // Float indices are truncated towards zero, as a cast to int is.
    const double index = std::trunc(value);
    on[i] = -1;
    if (index >= -static_cast<double>(depth) && index < depth) {
      const auto k = static_cast<int64_t>(index);
      on[i] = k < 0 ? k + depth : k;
    }
  }
  return on;
}

// The layout of the output: [outer, depth, inner] around the axis.
struct OneHotLayout {
  int64_t depth = 0;
  int64_t outer = 1;
  int64_t inner = 1;
  std::vector<int64_t> on;
};

absl::StatusOr<OneHotLayout> LayoutOf(const KernelContext& context,
                                      const Tensor& out) {
  OneHotLayout layout;
  SF_ASSIGN_OR_RETURN(layout.depth, DepthOf(context.Input("Depth"),
                                            context.InputName("Depth")));
  const Tensor& indices = context.Input("Indices");
  SF_ASSIGN_OR_RETURN(const int axis,
                      OneHotAxis(context.attrs(), indices.rank() + 1));
  SF_CHECK(out.rank() == indices.rank() + 1 && out.dims()[axis] == layout.depth,
           "the output (shape %s) does not hold %d classes at axis %d",
           DimsToString(out.dims()), layout.depth, axis);
  const AxisSplit split = SplitAtAxis(out.dims(), axis);
  layout.outer = split.outer;
  layout.inner = split.inner;
  SF_ASSIGN_OR_RETURN(layout.on, OnPositions(indices, layout.depth));
  return layout;
}

template <typename T>
absl::Status OneHotKernel(KernelContext& context) {
  const Tensor& values = context.Input("Values");
  SF_CHECK(values.numel() == 2,
           "input \"Values\" (variable \"%s\") is %s: expected [off_value, "
           "on_value]",
           context.InputName("Values"), values.DebugString());
  Tensor* out = context.Output("Out");
  SF_ASSIGN_OR_RETURN(const OneHotLayout layout, LayoutOf(context, *out));
  const T off = values.data<T>()[0];
  const T on = values.data<T>()[1];
  T* data = out->data<T>();
  std::fill(data, data + out->numel(), off);
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t i = 0; i < layout.inner; ++i) {
      const int64_t k = layout.on[o * layout.inner + i];
      if (k >= 0) data[(o * layout.depth + k) * layout.inner + i] = on;
    }
  }
  return absl::OkStatus();
}

absl::Status InferOneHotGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "Out@GRAD"));
  if (context.HasOutput("Values@GRAD")) {
    context.SetOutput("Values@GRAD", context.Input("Values"));
  }
  return absl::OkStatus();
}

// Values@GRAD = [sum of Out@GRAD where off, sum where on].
template <typename T>
absl::Status OneHotGradKernel(KernelContext& context) {
  if (!context.HasOutput("Values@GRAD")) return absl::OkStatus();
  const Tensor& grad = context.Input("Out@GRAD");
  SF_ASSIGN_OR_RETURN(const OneHotLayout layout, LayoutOf(context, grad));
  const T* g = grad.data<T>();
  T total = 0, on = 0;
  for (int64_t i = 0; i < grad.numel(); ++i) total += g[i];
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t i = 0; i < layout.inner; ++i) {
      const int64_t k = layout.on[o * layout.inner + i];
      if (k >= 0) on += g[(o * layout.depth + k) * layout.inner + i];
    }
  }
  T* out = context.Output("Values@GRAD")->data<T>();
  out[0] = total - on;
  out[1] = on;
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(one_hot)
    .Input("Indices")
    .Input("Depth")
    .Input("Values")
    .Output("Out")
    .Attr("axis", AttrType::kInt, AttrValue(-1))
    .Infer(InferOneHot)
    .Grad(GradSpec("one_hot_grad")
              .ReadInput("Indices")
              .ReadInput("Depth")
              .ReadInput("Values")
              .ReadOutputGrad("Out")
              .WriteInputGrad("Values"))
    .KernelDtypeFromInput("Values")
    .Kernel(DeviceType::kCPU, kFloat32, &OneHotKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &OneHotKernel<double>)
    .Kernel(DeviceType::kCPU, kInt32, &OneHotKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &OneHotKernel<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &OneHotKernel<bool>);

SF_REGISTER_OP(one_hot_grad)
    .Input("Indices")
    .Input("Depth")
    .Input("Values")
    .Input("Out@GRAD")
    .Output("Values@GRAD", /*optional=*/true)
    .Attr("axis", AttrType::kInt, AttrValue(-1))
    .Infer(InferOneHotGrad)
    .KernelDtypeFromInput("Out@GRAD")
    .Kernel(DeviceType::kCPU, kFloat32, &OneHotGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &OneHotGradKernel<double>);

}  // namespace scopeflow
