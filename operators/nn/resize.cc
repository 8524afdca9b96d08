// resize: interpolates chosen axes of a tensor of any rank to new sizes,
// with ONNX Resize's semantics (opsets 11 to 19): nearest, (n-)linear and
// cubic modes, every coordinate transformation, antialiasing, and
// tf_crop_and_resize's region of interest with an extrapolation value; and
// nearest_mode "floor_up_ceil_down" for ONNX Upsample and Resize before
// opset 11 (see interpolation.h). The output size comes from scales or sizes, each either an attribute or
// a tensor input read at run time, which wins when bound (then Prepare
// leaves the resized dimensions unknown and the executor infers them
// before each run); the region of interest likewise.
//
// resize_grad: the gradient of X. For fixed scales or sizes, resizing is a
// linear map of X (interpolation weights do not depend on X), so the
// gradient applies the transposed map to Out@GRAD.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/interpolation.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

using interpolation::AxisMap;
using interpolation::AxisResize;
using interpolation::CoordinateMode;
using interpolation::Method;
using interpolation::Mode;
using interpolation::NearestMode;

// Scales, sizes or the region of interest: given by an attribute or an
// input, with its values where known.
struct Given {
  bool present = false;
  // For messages: `attribute "scales"` or `input "Scales" (variable "s")`.
  std::string what;
  // -1 where unknown.
  int64_t count = -1;
  std::optional<std::vector<double>> values;
};

std::vector<double> AttrValues(const Attributes& attrs, const char* name) {
  if (std::string(name) == "sizes") {
    const auto& sizes = attrs.Get<std::vector<int64_t>>(name);
    return std::vector<double>(sizes.begin(), sizes.end());
  }
  const auto& values = attrs.Get<std::vector<float>>(name);
  return std::vector<double>(values.begin(), values.end());
}

absl::StatusOr<std::vector<double>> TensorValues(const Tensor& tensor,
                                                 const std::string& what) {
  SF_CHECK(tensor.place().type() == DeviceType::kCPU,
           "%s is on %s: resize reads it on the host", what,
           tensor.place().ToString());
  const int64_t n = tensor.numel();
  switch (tensor.dtype()) {
    case kFloat32:
      return std::vector<double>(tensor.data<float>(),
                                 tensor.data<float>() + n);
    case kFloat64:
      return std::vector<double>(tensor.data<double>(),
                                 tensor.data<double>() + n);
    case kInt32:
      return std::vector<double>(tensor.data<int32_t>(),
                                 tensor.data<int32_t>() + n);
    case kInt64:
      return std::vector<double>(tensor.data<int64_t>(),
                                 tensor.data<int64_t>() + n);
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has dtype %s", what, DataTypeName(tensor.dtype())));
  }
}

// What inference knows of input `slot` (whose dtype must be one of
// `dtypes`) or, where it is not bound, of attribute `attr` (as elsewhere,
// an input given for values known only at run time wins): the values of
// the attribute, or of the input where InputValue shows them.
absl::StatusOr<Given> GivenAtInference(const InferContext& context,
                                       const char* attr, const char* slot,
                                       absl::Span<const DataType> dtypes) {
  Given given;
  const std::vector<double> attr_values = AttrValues(context.attrs(), attr);
  if (!context.HasInput(slot) && !attr_values.empty()) {
    given.present = true;
    given.what = absl::StrFormat("attribute \"%s\"", attr);
    given.count = static_cast<int64_t>(attr_values.size());
    given.values = attr_values;
  } else if (context.HasInput(slot)) {
    SF_RETURN_IF_ERROR(CheckDtypeIn(context, slot, dtypes));
    SF_RETURN_IF_ERROR(CheckRank(context, slot, 1, 1));
    given.present = true;
    given.what = absl::StrFormat("input \"%s\" (variable \"%s\")", slot,
                                 context.InputName(slot));
    const VarInfo& info = context.Input(slot);
    if (info.has_dims) given.count = info.dims[0];
    if (const Tensor* value = context.InputValue(slot)) {
      SF_ASSIGN_OR_RETURN(given.values, TensorValues(*value, given.what));
      given.count = static_cast<int64_t>(given.values->size());
    }
  }
  return given;
}

// The same in a kernel, where every value is known.
absl::StatusOr<Given> GivenAtRun(const KernelContext& context, const char* attr,
                                 const char* slot) {
  Given given;
  std::vector<double> values;
  if (context.HasInput(slot)) {
    given.present = true;
    given.what = absl::StrFormat("input \"%s\" (variable \"%s\")", slot,
                                 context.InputName(slot));
    SF_ASSIGN_OR_RETURN(values, TensorValues(context.Input(slot), given.what));
  } else {
    values = AttrValues(context.attrs(), attr);
    given.present = !values.empty();
    given.what = absl::StrFormat("attribute \"%s\"", attr);
  }
  if (given.present) {
    given.count = static_cast<int64_t>(values.size());
    given.values = std::move(values);
  }
  return given;
}

Method MethodOf(const Attributes& attrs) {
  Method method;
  const std::string& mode = attrs.Get<std::string>("mode");
  method.mode = mode == "linear"  ? Mode::kLinear
                : mode == "cubic" ? Mode::kCubic
                                  : Mode::kNearest;
  const std::string& coordinates =
      attrs.Get<std::string>("coordinate_transformation_mode");
  if (coordinates == "half_pixel_symmetric") {
    method.coordinate_mode = CoordinateMode::kHalfPixelSymmetric;
  } else if (coordinates == "pytorch_half_pixel") {
    method.coordinate_mode = CoordinateMode::kPytorchHalfPixel;
  } else if (coordinates == "align_corners") {
    method.coordinate_mode = CoordinateMode::kAlignCorners;
  } else if (coordinates == "asymmetric") {
    method.coordinate_mode = CoordinateMode::kAsymmetric;
  } else if (coordinates == "tf_half_pixel_for_nn") {
    method.coordinate_mode = CoordinateMode::kTfHalfPixelForNn;
  } else if (coordinates == "tf_crop_and_resize") {
    method.coordinate_mode = CoordinateMode::kTfCropAndResize;
  } else {
    method.coordinate_mode = CoordinateMode::kHalfPixel;
  }
  const std::string& nearest = attrs.Get<std::string>("nearest_mode");
  method.nearest_mode = nearest == "round_prefer_ceil"
                            ? NearestMode::kRoundPreferCeil
                        : nearest == "floor" ? NearestMode::kFloor
                        : nearest == "ceil"  ? NearestMode::kCeil
                        : nearest == "floor_up_ceil_down"
                            ? NearestMode::kFloorUpCeilDown
                            : NearestMode::kRoundPreferFloor;
  method.cubic_coeff_a = attrs.Get<float>("cubic_coeff_a");
  method.exclude_outside = attrs.Get<bool>("exclude_outside");
  method.antialias = attrs.Get<bool>("antialias");
  return method;
}

// The resizing an op describes: the output dims (-1 where unknown) and,
// once every value and input dim is known, each resized axis.
struct Plan {
  bool has_dims = false;
  std::vector<int64_t> out;
  std::vector<int> axes;
  // One per axes entry once every value and input dim is known (always in
  // a kernel); empty before.
  std::vector<AxisResize> resizes;
};

absl::StatusOr<std::vector<int>> AxesOf(const Attributes& attrs, int rank) {
  const auto& given = attrs.Get<std::vector<int32_t>>("axes");
  std::vector<int> axes;
  if (given.empty()) {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
    return axes;
  }
  for (int32_t axis : given) {
    SF_ASSIGN_OR_RETURN(const int a, NormalizeAxis(axis, rank, "axes"));
    SF_CHECK(std::find(axes.begin(), axes.end(), a) == axes.end(),
             "attribute \"axes\" = [%s] names axis %d twice",
             absl::StrJoin(given, ", "), a);
    axes.push_back(a);
  }
  return axes;
}

absl::Status CheckCount(const Given& given, size_t axes, const char* per,
                        size_t factor = 1) {
  SF_CHECK(
      given.count < 0 || given.count == static_cast<int64_t>(factor * axes),
      "%s holds %d values: expected %d, %s", given.what, given.count,
      factor * axes, per);
  return absl::OkStatus();
}

// `cells` (a scaled size, already rounded as wanted) as a dimension of
// axis `axis`; an error naming `source` where it does not fit.
absl::StatusOr<int64_t> CellCount(double cells, const Given& source, int axis) {
  // Far beyond any allocation, and exact in a double.
  constexpr double kMost = 9007199254740992.0;  // 2^53
  SF_CHECK(cells <= kMost,
           "%s makes axis %d %g cells long: expected at most 2^53", source.what,
           axis, cells);
  return static_cast<int64_t>(cells);
}

// Everything inference and the kernels check and compute: `x_dims` are
// X's dims (-1 where unknown; `x_has_dims` false if even the rank is).
absl::StatusOr<Plan> PlanResize(const Attributes& attrs, bool x_has_dims,
                                const Dims& x_dims, const Given& scales,
                                const Given& sizes, const Given& roi) {
  SF_CHECK(scales.present || sizes.present,
           "expected the output size: attribute \"scales\" or \"sizes\", or "
           "input \"Scales\" or \"Sizes\"");
  SF_CHECK(!(scales.present && sizes.present),
           "%s and %s both give the output size: expected one of them",
           scales.what, sizes.what);
  const std::string& mode = attrs.Get<std::string>("mode");
  SF_CHECK(!attrs.Get<bool>("antialias") || mode != "nearest",
           "attribute \"antialias\" is true but mode is \"nearest\": "
           "antialiasing applies to linear and cubic interpolation");
  const bool crop = attrs.Get<std::string>("coordinate_transformation_mode") ==
                    "tf_crop_and_resize";
  SF_CHECK(crop || !roi.present,
           "%s gives a region of interest, which only coordinate_"
           "transformation_mode \"tf_crop_and_resize\" reads",
           roi.what);
  SF_CHECK(!crop || roi.present,
           "coordinate_transformation_mode \"tf_crop_and_resize\" needs the "
           "region of interest: attribute \"roi\" or input \"Roi\"");
  if (!x_has_dims) return Plan();
  Plan plan;
  plan.has_dims = true;
  plan.out.assign(x_dims.begin(), x_dims.end());
  const int rank = static_cast<int>(x_dims.size());
  SF_ASSIGN_OR_RETURN(plan.axes, AxesOf(attrs, rank));
  const size_t n = plan.axes.size();
  const Given& source = scales.present ? scales : sizes;
  SF_RETURN_IF_ERROR(CheckCount(source, n, "one per resized axis"));
  SF_RETURN_IF_ERROR(
      CheckCount(roi, n, "a start and an end per resized axis", 2));
  if (source.values.has_value()) {
    for (double v : *source.values) {
      SF_CHECK(scales.present ? v > 0 : v >= 0, "%s = [%s]: expected %s values",
               source.what, absl::StrJoin(*source.values, ", "),
               scales.present ? "positive" : "non-negative");
    }
  }
  const std::string& policy =
      attrs.Get<std::string>("keep_aspect_ratio_policy");
  const bool keep_ratio = sizes.present && policy != "stretch";
  bool dims_known = true;
  for (int a : plan.axes) dims_known = dims_known && x_dims[a] >= 0;
  if (!source.values.has_value() || !dims_known) {
    // The dims that can be told without the rest: scales give an axis's
    // size from its own dim, stretched sizes give it outright; a kept
    // aspect ratio needs every dim.
    const bool per_axis = source.values.has_value() && !keep_ratio;
    for (size_t i = 0; i < n; ++i) {
      const int a = plan.axes[i];
      if (!per_axis) {
        plan.out[a] = -1;
      } else if (!scales.present) {
        plan.out[a] = static_cast<int64_t>((*source.values)[i]);
      } else if (x_dims[a] < 0) {
        plan.out[a] = -1;
      } else {
        SF_ASSIGN_OR_RETURN(
            plan.out[a],
            CellCount(std::floor((*source.values)[i] * x_dims[a]), source, a));
      }
    }
    return plan;
  }
  const std::vector<double>& values = *source.values;
  std::vector<double> scale(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x_dims[plan.axes[i]];
    if (scales.present) {
      scale[i] = values[i];
      SF_ASSIGN_OR_RETURN(
          plan.out[plan.axes[i]],
          CellCount(std::floor(values[i] * in), source, plan.axes[i]));
    } else {
      SF_CHECK(in > 0 || !keep_ratio,
               "X has shape %s: keep_aspect_ratio_policy \"%s\" cannot keep "
               "the ratio of empty axis %d",
               DimsToString(x_dims), policy, plan.axes[i]);
      // An empty axis has no samples to place: any scale does.
      scale[i] = in > 0 ? values[i] / static_cast<double>(in) : 1.0;
      plan.out[plan.axes[i]] = static_cast<int64_t>(values[i]);
    }
  }
  if (keep_ratio) {
    // One scale for every resized axis, the one that fits the sizes
    // inside (not_larger) or covers them (not_smaller); sizes round half
    // up.
    const double common = policy == "not_larger"
                              ? *std::min_element(scale.begin(), scale.end())
                              : *std::max_element(scale.begin(), scale.end());
    for (size_t i = 0; i < n; ++i) {
      const int a = plan.axes[i];
      scale[i] = common;
      SF_ASSIGN_OR_RETURN(
          plan.out[a],
          CellCount(std::floor(common * static_cast<double>(x_dims[a]) + 0.5),
                    source, a));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const int a = plan.axes[i];
    SF_CHECK(x_dims[a] > 0 || plan.out[a] == 0,
             "X has shape %s: cannot resize empty axis %d to %d cells",
             DimsToString(x_dims), a, plan.out[a]);
    AxisResize resize;
    resize.in = x_dims[a];
    resize.out = plan.out[a];
    resize.scale = scale[i];
    if (roi.values.has_value()) {
      resize.roi_start = (*roi.values)[i];
      resize.roi_end = (*roi.values)[n + i];
    }
    plan.resizes.push_back(resize);
  }
  return plan;
}

constexpr DataType kScaleDtypes[] = {kFloat32, kFloat64};
constexpr DataType kSizeDtypes[] = {kInt32, kInt64};

// Checks the inputs of resize (which its gradient op reads too) and returns
// what the forward op writes to "Out".
absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckFloatInput(context, "X"));
  SF_ASSIGN_OR_RETURN(
      const Given scales,
      GivenAtInference(context, "scales", "Scales", kScaleDtypes));
  SF_ASSIGN_OR_RETURN(const Given sizes,
                      GivenAtInference(context, "sizes", "Sizes", kSizeDtypes));
  SF_ASSIGN_OR_RETURN(const Given roi,
                      GivenAtInference(context, "roi", "Roi", kScaleDtypes));
  const VarInfo& x = context.Input("X");
  SF_ASSIGN_OR_RETURN(const Plan plan, PlanResize(context.attrs(), x.has_dims,
                                                  x.dims, scales, sizes, roi));
  return VarInfo{x.dtype, Dims(plan.out.begin(), plan.out.end()),
                 plan.has_dims};
}

absl::Status InferResize(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  context.SetOutput("Out", out);
  return absl::OkStatus();
}

absl::Status InferResizeGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo out, InferOutput(context));
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Out@GRAD", out, "Out"));
  return GradsLikeInputs({"X"})(context);
}

absl::StatusOr<Plan> PlanAtRun(const KernelContext& context) {
  SF_ASSIGN_OR_RETURN(const Given scales,
                      GivenAtRun(context, "scales", "Scales"));
  SF_ASSIGN_OR_RETURN(const Given sizes, GivenAtRun(context, "sizes", "Sizes"));
  SF_ASSIGN_OR_RETURN(const Given roi, GivenAtRun(context, "roi", "Roi"));
  const Tensor& x = context.Input("X");
  return PlanResize(context.attrs(), /*x_has_dims=*/true, x.dims(), scales,
                    sizes, roi);
}

// Writes `value` into every cell whose coordinate along `axis` the map
// marks outside the input.
void FillOutside(const AxisMap& map, const Dims& dims, int axis, double value,
                 std::vector<double>& data) {
  int64_t outer = 1;
  int64_t inner = 1;
  for (int i = 0; i < axis; ++i) outer *= dims[i];
  for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t size = dims[axis];
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t o = 0; o < size; ++o) {
      if (!map.outside[o]) continue;
      double* slab = data.data() + (b * size + o) * inner;
      std::fill(slab, slab + inner, value);
    }
  }
}

template <typename T>
absl::Status ResizeKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  SF_ASSIGN_OR_RETURN(const Plan plan, PlanAtRun(context));
  if (out.numel() == 0) return absl::OkStatus();
  const Method method = MethodOf(context.attrs());
  std::vector<double> values(x.data<T>(), x.data<T>() + x.numel());
  Dims dims = x.dims();
  std::vector<AxisMap> maps;
  for (size_t i = 0; i < plan.axes.size(); ++i) {
    const int axis = plan.axes[i];
    maps.push_back(interpolation::MapOf(method, plan.resizes[i]));
    if (!maps.back().IsIdentity()) {
      values = interpolation::Apply(maps.back(), values, dims, axis);
    }
    dims[axis] = plan.resizes[i].out;
  }
  const double extrapolation =
      context.attrs().Get<float>("extrapolation_value");
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].AnyOutside()) {
      FillOutside(maps[i], dims, plan.axes[i], extrapolation, values);
    }
  }
  std::transform(values.begin(), values.end(), out.data<T>(),
                 [](double v) { return static_cast<T>(v); });
  return absl::OkStatus();
}

// X@GRAD: Out@GRAD through the transposed axis maps, last axis first.
template <typename T>
absl::Status ResizeGradKernel(KernelContext& context) {
  const Tensor& d_out = context.Input("Out@GRAD");
  Tensor& d_x = *context.Output("X@GRAD");
  SF_ASSIGN_OR_RETURN(const Plan plan, PlanAtRun(context));
  if (d_x.numel() == 0) return absl::OkStatus();
  const Method method = MethodOf(context.attrs());
  std::vector<double> values(d_out.data<T>(), d_out.data<T>() + d_out.numel());
  Dims dims = d_out.dims();
  for (size_t i = plan.axes.size(); i-- > 0;) {
    const AxisResize& resize = plan.resizes[i];
    const int axis = plan.axes[i];
    const AxisMap map = interpolation::MapOf(method, resize);
    if (!map.IsIdentity()) {
      values =
          interpolation::ApplyTransposed(map, values, dims, axis, resize.in);
    }
    dims[axis] = resize.in;
  }
  std::transform(values.begin(), values.end(), d_x.data<T>(),
                 [](double v) { return static_cast<T>(v); });
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(resize)
    .Input("X")
    .Input("Scales", /*optional=*/true)
    .Input("Sizes", /*optional=*/true)
    .Input("Roi", /*optional=*/true)
    .Output("Out")
    .Attr("mode", AttrType::kString, AttrValue(std::string("nearest")),
          OneOf({"nearest", "linear", "cubic"}))
    .Attr("coordinate_transformation_mode", AttrType::kString,
          AttrValue(std::string("half_pixel")),
          OneOf({"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                 "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                 "tf_crop_and_resize"}))
    .Attr("nearest_mode", AttrType::kString,
          AttrValue(std::string("round_prefer_floor")),
          OneOf({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                 "floor_up_ceil_down"}))
    .Attr("cubic_coeff_a", AttrType::kFloat, AttrValue(-0.75f))
    .Attr("exclude_outside", AttrType::kBool, AttrValue(false))
    .Attr("extrapolation_value", AttrType::kFloat, AttrValue(0.0f))
    .Attr("antialias", AttrType::kBool, AttrValue(false))
    .Attr("keep_aspect_ratio_policy", AttrType::kString,
          AttrValue(std::string("stretch")),
          OneOf({"stretch", "not_larger", "not_smaller"}))
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("scales", AttrType::kFloats, AttrValue(std::vector<float>{}),
          Positive())
    .Attr("sizes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}),
          NonNegative())
    .Attr("roi", AttrType::kFloats, AttrValue(std::vector<float>{}))
    .Infer(InferResize)
    .Grad(GradSpec("resize_grad")
              .ReadInput("X")
              .ReadInput("Scales")
              .ReadInput("Sizes")
              .ReadInput("Roi")
              .ReadOutputGrad("Out")
              .WriteInputGrad("X"))
    .Kernel(DeviceType::kCPU, kFloat32, &ResizeKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ResizeKernel<double>);

// Reads X only for its shape, and Scales, Sizes and Roi for the map.
SF_REGISTER_OP(resize_grad)
    .Input("X")
    .Input("Scales", /*optional=*/true)
    .Input("Sizes", /*optional=*/true)
    .Input("Roi", /*optional=*/true)
    .Input("Out@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Attr("mode", AttrType::kString, AttrValue(std::string("nearest")),
          OneOf({"nearest", "linear", "cubic"}))
    .Attr("coordinate_transformation_mode", AttrType::kString,
          AttrValue(std::string("half_pixel")),
          OneOf({"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                 "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                 "tf_crop_and_resize"}))
    .Attr("nearest_mode", AttrType::kString,
          AttrValue(std::string("round_prefer_floor")),
          OneOf({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                 "floor_up_ceil_down"}))
    .Attr("cubic_coeff_a", AttrType::kFloat, AttrValue(-0.75f))
    .Attr("exclude_outside", AttrType::kBool, AttrValue(false))
    .Attr("extrapolation_value", AttrType::kFloat, AttrValue(0.0f))
    .Attr("antialias", AttrType::kBool, AttrValue(false))
    .Attr("keep_aspect_ratio_policy", AttrType::kString,
          AttrValue(std::string("stretch")),
          OneOf({"stretch", "not_larger", "not_smaller"}))
    .Attr("axes", AttrType::kInts, AttrValue(std::vector<int32_t>{}))
    .Attr("scales", AttrType::kFloats, AttrValue(std::vector<float>{}),
          Positive())
    .Attr("sizes", AttrType::kInt64s, AttrValue(std::vector<int64_t>{}),
          NonNegative())
    .Attr("roi", AttrType::kFloats, AttrValue(std::vector<float>{}))
    .Infer(InferResizeGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &ResizeGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &ResizeGradKernel<double>);

}  // namespace scopeflow
