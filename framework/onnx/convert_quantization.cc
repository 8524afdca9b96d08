// Converters of ONNX's quantization ops onto operators/quantization:
// QuantizeLinear and DequantizeLinear (opset 10: per tensor; 13: "axis",
// per axis; 19: "saturate", for float8 only; 21: "block_size" and
// QuantizeLinear's "output_dtype"; 23: DequantizeLinear's "output_dtype"),
// DynamicQuantizeLinear (11), MatMulInteger and ConvInteger (10),
// QLinearMatMul (10; 21 widened the types) and QLinearConv (10).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/onnx_tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// Binds ONNX inputs to op slots in order; absent optional inputs are left
// unbound.
absl::Status BindInputs(NodeContext& context, OpBuilder& op,
                        const std::vector<const char*>& slots) {
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!context.HasInput(static_cast<int>(i))) continue;
    SF_ASSIGN_OR_RETURN(const std::string var,
                        context.Input(static_cast<int>(i)));
    op.In(slots[i], var);
  }
  return absl::OkStatus();
}

// "axis" and "block_size" as the opset defines them.
absl::Status AxisAttrs(NodeContext& context, OpBuilder& op) {
  int64_t axis = 1;
  if (context.opset() >= 13) {
    SF_ASSIGN_OR_RETURN(axis, context.IntAttr("axis", 1));
  } else {
    const VarInfo scale = context.InputInfo(1);
    int64_t count = 1;
    for (int64_t d : scale.dims) count *= d;
    SF_CHECK(
        !scale.has_dims || scale.dims.size() > 1 || count == 1 || count < 0,
        "input 1 (the scale) has shape %s: before opset 13 the scale is "
        "one element (per tensor)",
        DimsToString(scale.dims));
  }
  int64_t block_size = 0;
  if (context.opset() >= 21) {
    SF_ASSIGN_OR_RETURN(block_size, context.IntAttr("block_size", 0));
    SF_CHECK(block_size >= 0, "attribute \"block_size\" is %d: expected >= 0",
             block_size);
  }
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  SF_ASSIGN_OR_RETURN(const int32_t block32, ToInt32(block_size, "block_size"));
  op.Attr("axis", axis32).Attr("block_size", block32);
  return absl::OkStatus();
}

// The scopeflow dtype of attribute "output_dtype" (0: not given).
absl::StatusOr<DataType> OutputDtypeAttr(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t onnx_type,
                      context.IntAttr("output_dtype", 0));
  if (onnx_type == 0) return DATA_TYPE_UNSPECIFIED;
  absl::StatusOr<DataType> dtype =
      DataTypeFromOnnx(static_cast<int32_t>(onnx_type));
  if (!dtype.ok()) {
    return Unsupported(absl::StrFormat("attribute \"output_dtype\": %s",
                                       dtype.status().message()));
  }
  return *dtype;
}

absl::Status ConvertQuantizeLinear(NodeContext& context) {
  OpBuilder op("quantize_linear");
  SF_RETURN_IF_ERROR(BindInputs(context, op, {"X", "Scale", "ZeroPoint"}));
  op.Out("Y", context.Output(0));
  SF_RETURN_IF_ERROR(AxisAttrs(context, op));
  DataType out = DATA_TYPE_UNSPECIFIED;
  if (context.opset() >= 21) {
    SF_ASSIGN_OR_RETURN(out, OutputDtypeAttr(context));
  }
  if (context.HasInput(2)) {
    const DataType zero_point = context.InputInfo(2).dtype;
    SF_CHECK(out == DATA_TYPE_UNSPECIFIED ||
                 zero_point == DATA_TYPE_UNSPECIFIED || out == zero_point,
             "attribute \"output_dtype\" is %s but the zero point (input 2) "
             "is %s: they must agree",
             DataTypeName(out), DataTypeName(zero_point));
  } else if (out != DATA_TYPE_UNSPECIFIED) {
    if (out != kUInt8 && out != kInt8 && out != kUInt16 && out != kInt16 &&
        !(SizeOf(out) == 1 && IsFloatDataType(out)) &&
        !IsSubByteDataType(out)) {
      return Unsupported(absl::StrFormat(
          "QuantizeLinear to %s: scopeflow quantizes to uint8, int8, uint16, "
          "int16, the float8 types, int4, uint4, int2, uint2 and float4e2m1",
          DataTypeName(out)));
    }
    op.Attr("out_dtype", static_cast<int32_t>(out));
  }
  context.IgnoreAttr("precision");
  // Since opset 19; it concerns float8 outputs only.
  SF_ASSIGN_OR_RETURN(const int64_t saturate, context.IntAttr("saturate", 1));
  op.Attr("saturate", saturate != 0);
  return context.Emit(op);
}

absl::Status ConvertDequantizeLinear(NodeContext& context) {
  OpBuilder op("dequantize_linear");
  SF_RETURN_IF_ERROR(BindInputs(context, op, {"X", "Scale", "ZeroPoint"}));
  op.Out("Y", context.Output(0));
  SF_RETURN_IF_ERROR(AxisAttrs(context, op));
  if (context.opset() >= 23) {
    SF_ASSIGN_OR_RETURN(const DataType out, OutputDtypeAttr(context));
    const DataType scale = context.InputInfo(1).dtype;
    if (out != DATA_TYPE_UNSPECIFIED && out != scale) {
      return Unsupported(absl::StrFormat(
          "DequantizeLinear with output_dtype %s and a %s scale: scopeflow "
          "writes the scale's dtype",
          DataTypeName(out), DataTypeName(scale)));
    }
  }
  return context.Emit(op);
}

absl::Status ConvertDynamicQuantizeLinear(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("dynamic_quantize_linear");
  op.In("X", x)
      .Out("Y", context.Output(0))
      .Out("YScale",
           context.HasOutput(1) ? context.Output(1) : context.Temp("scale"))
      .Out("YZeroPoint", context.HasOutput(2) ? context.Output(2)
                                              : context.Temp("zero_point"));
  return context.Emit(op);
}

absl::Status ConvertMatMulInteger(NodeContext& context) {
  OpBuilder op("matmul_integer");
  SF_RETURN_IF_ERROR(
      BindInputs(context, op, {"A", "B", "AZeroPoint", "BZeroPoint"}));
  op.Out("Y", context.Output(0));
  return context.Emit(op);
}

absl::Status ConvertQLinearMatMul(NodeContext& context) {
  OpBuilder op("qlinear_matmul");
  SF_RETURN_IF_ERROR(BindInputs(context, op,
                                {"A", "AScale", "AZeroPoint", "B", "BScale",
                                 "BZeroPoint", "YScale", "YZeroPoint"}));
  op.Out("Y", context.Output(0));
  return context.Emit(op);
}

// The window attributes of ConvInteger and QLinearConv, whose input X is
// input 0 and filter W input `w`.
absl::Status ConvWindowAttrs(NodeContext& context, OpBuilder& op, int w) {
  const VarInfo x_info = context.InputInfo(0);
  const VarInfo w_info = context.InputInfo(w);
  int spatial = -1;
  if (w_info.has_dims) spatial = static_cast<int>(w_info.dims.size()) - 2;
  if (spatial < 0 && x_info.has_dims) {
    spatial = static_cast<int>(x_info.dims.size()) - 2;
  }
  std::vector<int64_t> kernel;
  if (context.HasAttr("kernel_shape")) {
    SF_ASSIGN_OR_RETURN(kernel, context.IntsAttr("kernel_shape"));
    if (spatial < 0) spatial = static_cast<int>(kernel.size());
  }
  if (spatial < 1) {
    return Unsupported(
        "a convolution whose filter and input have unknown ranks: the "
        "number of spatial axes is needed for the window");
  }
  if (kernel.empty()) {
    for (int i = 0; i < spatial; ++i) {
      kernel.push_back(w_info.has_dims ? w_info.dims[2 + i] : -1);
    }
  }
  SF_CHECK(static_cast<int>(kernel.size()) == spatial,
           "attribute \"kernel_shape\" = %s: expected %d values",
           IntsToString(kernel), spatial);
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> strides,
      context.IntsAttr("strides", std::vector<int64_t>(spatial, 1)));
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> dilations,
      context.IntsAttr("dilations", std::vector<int64_t>(spatial, 1)));
  SF_CHECK(static_cast<int>(strides.size()) == spatial &&
               static_cast<int>(dilations.size()) == spatial,
           "attributes \"strides\" %s and \"dilations\" %s: expected %d "
           "values each",
           IntsToString(strides), IntsToString(dilations), spatial);
  SF_ASSIGN_OR_RETURN(const int64_t group, context.IntAttr("group", 1));
  SF_ASSIGN_OR_RETURN(
      const std::vector<int32_t> paddings,
      SpatialPaddings(context, x_info, kernel, strides, dilations));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> strides32,
                      ToInt32s(strides, "strides"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> dilations32,
                      ToInt32s(dilations, "dilations"));
  SF_ASSIGN_OR_RETURN(const int32_t groups, ToInt32(group, "group"));
  op.Attr("strides", strides32)
      .Attr("paddings", paddings)
      .Attr("dilations", dilations32)
      .Attr("groups", groups);
  return absl::OkStatus();
}

absl::Status ConvertConvInteger(NodeContext& context) {
  OpBuilder op("conv_integer");
  SF_RETURN_IF_ERROR(
      BindInputs(context, op, {"X", "W", "XZeroPoint", "WZeroPoint"}));
  op.Out("Y", context.Output(0));
  SF_RETURN_IF_ERROR(ConvWindowAttrs(context, op, 1));
  return context.Emit(op);
}

absl::Status ConvertQLinearConv(NodeContext& context) {
  OpBuilder op("qlinear_conv");
  SF_RETURN_IF_ERROR(BindInputs(context, op,
                                {"X", "XScale", "XZeroPoint", "W", "WScale",
                                 "WZeroPoint", "YScale", "YZeroPoint", "B"}));
  op.Out("Y", context.Output(0));
  SF_RETURN_IF_ERROR(ConvWindowAttrs(context, op, 3));
  return context.Emit(op);
}

}  // namespace

void AddQuantizationConverters(ConverterMap& map) {
  map["QuantizeLinear"] = &ConvertQuantizeLinear;
  map["DequantizeLinear"] = &ConvertDequantizeLinear;
  map["DynamicQuantizeLinear"] = &ConvertDynamicQuantizeLinear;
  map["MatMulInteger"] = &ConvertMatMulInteger;
  map["QLinearMatMul"] = &ConvertQLinearMatMul;
  map["ConvInteger"] = &ConvertConvInteger;
  map["QLinearConv"] = &ConvertQLinearConv;
}

}  // namespace onnx_import
}  // namespace scopeflow
