// Converters of ONNX Resize and Upsample to scopeflow resize. Scales, sizes
// and the region of interest that are constants become the op's
// attributes; those computed or fed at run time bind its Scales, Sizes and
// Roi inputs, and the output size is then known at run time only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// A constant floating-point input's elements.
absl::StatusOr<std::vector<float>> ConstantFloats(NodeContext& context, int i) {
  SF_ASSIGN_OR_RETURN(const Tensor* value, context.ConstantInput(i, ""));
  const int64_t n = value->numel();
  switch (value->dtype()) {
    case kFloat32:
      return std::vector<float>(value->data<float>(), value->data<float>() + n);
    case kFloat64:
      return std::vector<float>(value->data<double>(),
                                value->data<double>() + n);
    default:
      return Unsupported(absl::StrFormat(
          "input %d (\"%s\") has dtype %s: scopeflow resize takes float32 or "
          "float64 scales and region of interest",
          i, context.InputName(i), DataTypeName(value->dtype())));
  }
}

// Binds node input `i` to `op`: a constant as attribute `attr` (an empty
// one counts as absent, as ONNX's opset 11 writes an unused scales), a
// run-time value as input `slot`. Returns whether the node gives it.
absl::StatusOr<bool> BindValues(NodeContext& context, int i, const char* attr,
                                const char* slot, bool integer, OpBuilder& op) {
  if (!context.HasInput(i)) return false;
  if (!context.IsConstant(i)) {
    SF_ASSIGN_OR_RETURN(const std::string name, context.Input(i));
    op.In(slot, name);
    return true;
  }
  if (integer) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> values,
                        context.ConstantInts(i, ""));
    if (values.empty()) return false;
    op.Attr(attr, values);
    return true;
  }
  SF_ASSIGN_OR_RETURN(const std::vector<float> values,
                      ConstantFloats(context, i));
  if (values.empty()) return false;
  op.Attr(attr, values);
  return true;
}

// Upsample (opsets 7 to 10: deprecated at 10, which exporters still write)
// and Resize at opset 10 scale each axis by its scale, the output
// floor(input * scale), with the asymmetric coordinates x / scale, in mode
// nearest or linear. Neither defines how nearest rounds; scopeflow's
// floor_up_ceil_down does as ONNX Runtime and ONNX's opset-10 cases (floor
// scaling up, ceil scaling down). The scales are Upsample's attribute
// before opset 9 and input 1 since (Resize 10's too).
absl::Status ConvertOpset10Resize(NodeContext& context) {
  const bool upsample = context.op_type() == "Upsample";
  SF_CHECK(!upsample || context.opset() <= 10,
           "Upsample is no operator of opset %d (deprecated at opset 10, "
           "replaced by Resize)",
           context.opset());
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("mode", "nearest"));
  SF_CHECK(mode == "nearest" || mode == "linear",
           "attribute \"mode\" is \"%s\": expected nearest or linear at "
           "opset %d",
           mode, context.opset());
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("resize");
  op.In("X", x)
      .Out("Out", context.Output(0))
      .Attr("mode", mode)
      .Attr("coordinate_transformation_mode", "asymmetric")
      .Attr("nearest_mode", "floor_up_ceil_down");
  std::optional<std::vector<float>> scales;
  if (upsample && context.opset() < 9) {
    SF_ASSIGN_OR_RETURN(scales, context.FloatsAttr("scales"));
  } else if (context.IsConstant(1)) {
    SF_ASSIGN_OR_RETURN(scales, ConstantFloats(context, 1));
  } else {
    SF_CHECK(context.HasInput(1), "input 1 (scales) is required");
    SF_ASSIGN_OR_RETURN(const std::string name, context.Input(1));
    op.In("Scales", name);
  }
  if (scales.has_value()) {
    const VarInfo info = context.InputInfo(0);
    SF_CHECK(!info.has_dims || scales->size() == info.dims.size(),
             "%d scales for an input of rank %d: expected one per axis",
             scales->size(), info.dims.size());
    for (float scale : *scales) {
      SF_CHECK(scale > 0 && (!upsample || scale >= 1),
               "scale %g: expected %s", scale,
               upsample ? "at least 1 (Upsample)" : "a positive scale");
    }
    op.Attr("scales", *scales);
  }
  return context.Emit(op);
}

absl::Status ConvertResize(NodeContext& context) {
  if (context.opset() < 11) return ConvertOpset10Resize(context);
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("mode", "nearest"));
  SF_ASSIGN_OR_RETURN(
      const std::string coordinates,
      context.StringAttr("coordinate_transformation_mode", "half_pixel"));
  SF_ASSIGN_OR_RETURN(const float cubic_coeff_a,
                      context.FloatAttr("cubic_coeff_a", -0.75f));
  SF_ASSIGN_OR_RETURN(const int64_t exclude_outside,
                      context.IntAttr("exclude_outside", 0));
  SF_ASSIGN_OR_RETURN(const float extrapolation_value,
                      context.FloatAttr("extrapolation_value", 0.0f));
  SF_ASSIGN_OR_RETURN(const std::string nearest_mode,
                      context.StringAttr("nearest_mode", "round_prefer_floor"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("resize");
  op.In("X", x)
      .Out("Out", context.Output(0))
      .Attr("mode", mode)
      .Attr("coordinate_transformation_mode", coordinates)
      .Attr("cubic_coeff_a", cubic_coeff_a)
      .Attr("exclude_outside", exclude_outside != 0)
      .Attr("extrapolation_value", extrapolation_value)
      .Attr("nearest_mode", nearest_mode);
  if (context.opset() >= 18) {
    SF_ASSIGN_OR_RETURN(const int64_t antialias,
                        context.IntAttr("antialias", 0));
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                        context.IntsAttr("axes", std::vector<int64_t>{}));
    SF_ASSIGN_OR_RETURN(
        const std::string policy,
        context.StringAttr("keep_aspect_ratio_policy", "stretch"));
    SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes32,
                        ToInt32s(axes, "axes"));
    op.Attr("antialias", antialias != 0)
        .Attr("axes", axes32)
        .Attr("keep_aspect_ratio_policy", policy);
  }
  // Only tf_crop_and_resize reads the region of interest.
  if (coordinates == "tf_crop_and_resize") {
    SF_RETURN_IF_ERROR(
        BindValues(context, 1, "roi", "Roi", /*integer=*/false, op).status());
  }
  SF_ASSIGN_OR_RETURN(
      const bool has_scales,
      BindValues(context, 2, "scales", "Scales", /*integer=*/false, op));
  SF_ASSIGN_OR_RETURN(
      const bool has_sizes,
      BindValues(context, 3, "sizes", "Sizes", /*integer=*/true, op));
  SF_CHECK(has_scales || has_sizes,
           "neither scales (input 2) nor sizes (input 3) is given");
  SF_CHECK(!(has_scales && has_sizes),
           "both scales (input 2) and sizes (input 3) are given: expected "
           "one of them");
  return context.Emit(op);
}

}  // namespace

void AddResizeConverters(ConverterMap& map) {
  map["Resize"] = &ConvertResize;
  map["Upsample"] = &ConvertOpset10Resize;
}

}  // namespace onnx_import
}  // namespace scopeflow
