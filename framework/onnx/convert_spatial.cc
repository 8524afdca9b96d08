// Converters of ONNX's spatial ops, each onto the scopeflow op of the same
// meaning: GridSample, AffineGrid, Col2Im, CenterCropPad, MaxUnpool and
// DeformConv.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// GridSample (16, 20, 22): opset 16 names the modes bilinear, nearest and
// bicubic and takes 4-D inputs only; 20 renamed them linear and cubic and
// took N-D ones.
absl::Status ConvertGridSample(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 16));
  const bool renamed = context.opset() >= 20;
  SF_ASSIGN_OR_RETURN(
      std::string mode,
      context.StringAttr("mode", renamed ? "linear" : "bilinear"));
  const std::string linear = renamed ? "linear" : "bilinear";
  const std::string cubic = renamed ? "cubic" : "bicubic";
  SF_CHECK(mode == linear || mode == cubic || mode == "nearest",
           "mode \"%s\": expected \"%s\", \"nearest\" or \"%s\" at opset %d",
           mode, linear, cubic, context.opset());
  if (mode == linear) mode = "linear";
  if (mode == cubic) mode = "cubic";
  SF_ASSIGN_OR_RETURN(const std::string padding,
                      context.StringAttr("padding_mode", "zeros"));
  SF_CHECK(padding == "zeros" || padding == "border" || padding == "reflection",
           "padding_mode \"%s\": expected \"zeros\", \"border\" or "
           "\"reflection\"",
           padding);
  SF_ASSIGN_OR_RETURN(const int64_t align_corners,
                      context.IntAttr("align_corners", 0));
  const VarInfo x_info = context.InputInfo(0);
  SF_CHECK(renamed || !x_info.has_dims || x_info.dims.size() == 4,
           "input X has rank %d: GridSample before opset 20 samples 4-D "
           "(N, C, H, W) inputs",
           x_info.dims.size());
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string grid, context.Input(1));
  return context.Emit(OpBuilder("grid_sample")
                          .In("X", x)
                          .In("Grid", grid)
                          .Out("Out", context.Output(0))
                          .Attr("mode", mode)
                          .Attr("padding_mode", padding)
                          .Attr("align_corners", align_corners != 0));
}

// AffineGrid (20): theta and the image size, both inputs.
absl::Status ConvertAffineGrid(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 20));
  SF_ASSIGN_OR_RETURN(const int64_t align_corners,
                      context.IntAttr("align_corners", 0));
  SF_ASSIGN_OR_RETURN(const std::string theta, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string size, context.Input(1));
  return context.Emit(OpBuilder("affine_grid")
                          .In("Theta", theta)
                          .In("Size", size)
                          .Out("Out", context.Output(0))
                          .Attr("align_corners", align_corners != 0));
}

// Col2Im (18): the image and block shapes are inputs, the sliding
// attributes.
absl::Status ConvertCol2Im(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 18));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations,
                      context.IntsAttr("dilations", std::vector<int64_t>{}));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      context.IntsAttr("pads", std::vector<int64_t>{}));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                      context.IntsAttr("strides", std::vector<int64_t>{}));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string image, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string block, context.Input(2));
  return context.Emit(OpBuilder("col2im")
                          .In("X", x)
                          .In("ImageShape", image)
                          .In("BlockShape", block)
                          .Out("Out", context.Output(0))
                          .Attr("dilations", dilations)
                          .Attr("pads", pads)
                          .Attr("strides", strides));
}

// CenterCropPad (18): the target lengths are an input; axes an attribute.
absl::Status ConvertCenterCropPad(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 18));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                      context.IntsAttr("axes", std::vector<int64_t>{}));
  std::vector<int32_t> axes32;
  for (int64_t a : axes) {
    SF_CHECK(a >= INT32_MIN && a <= INT32_MAX,
             "axes holds %d: expected an axis of the input", a);
    axes32.push_back(static_cast<int32_t>(a));
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string shape, context.Input(1));
  return context.Emit(OpBuilder("center_crop_pad")
                          .In("X", x)
                          .In("Shape", shape)
                          .Out("Out", context.Output(0))
                          .Attr("axes", axes32));
}

// MaxUnpool (9, 11, 22): the output shape an optional third input.
absl::Status ConvertMaxUnpool(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 9));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel,
                      context.IntsAttr("kernel_shape"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      context.IntsAttr("pads", std::vector<int64_t>{}));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                      context.IntsAttr("strides", std::vector<int64_t>{}));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string indices, context.Input(1));
  OpBuilder op("max_unpool");
  op.In("X", x).In("Indices", indices);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string shape, context.Input(2));
    op.In("OutputShape", shape);
  }
  return context.Emit(op.Out("Out", context.Output(0))
                          .Attr("kernel_shape", kernel)
                          .Attr("pads", pads)
                          .Attr("strides", strides));
}

// DeformConv (19, 22): 2-D only (scopeflow's deform_conv, as torchvision's);
// B and mask are optional inputs.
absl::Status ConvertDeformConv(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 19));
  OpBuilder op("deform_conv");
  for (const char* name : {"dilations", "kernel_shape", "pads", "strides"}) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> values,
                        context.IntsAttr(name, std::vector<int64_t>{}));
    op.Attr(name, values);
  }
  SF_ASSIGN_OR_RETURN(const int64_t group, context.IntAttr("group", 1));
  SF_ASSIGN_OR_RETURN(const int64_t offset_group,
                      context.IntAttr("offset_group", 1));
  const char* slots[] = {"X", "W", "Offset", "B", "Mask"};
  for (int i = 0; i < 5; ++i) {
    if (!context.HasInput(i)) continue;
    SF_ASSIGN_OR_RETURN(const std::string var, context.Input(i));
    op.In(slots[i], var);
  }
  return context.Emit(op.Out("Out", context.Output(0))
                          .Attr("group", group)
                          .Attr("offset_group", offset_group));
}

}  // namespace

void AddSpatialConverters(ConverterMap& map) {
  map["GridSample"] = &ConvertGridSample;
  map["AffineGrid"] = &ConvertAffineGrid;
  map["Col2Im"] = &ConvertCol2Im;
  map["CenterCropPad"] = &ConvertCenterCropPad;
  map["MaxUnpool"] = &ConvertMaxUnpool;
  map["DeformConv"] = &ConvertDeformConv;
}

}  // namespace onnx_import
}  // namespace scopeflow
