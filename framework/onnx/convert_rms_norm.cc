// The converter of ONNX's RMSNormalization (23): Y = X / sqrt(mean(X^2) +
// epsilon) * scale, the mean over the axes from "axis" to the last, emitted
// as the ops of ONNX's own function body (mul, reduce_mean, scale, sqrt,
// div, mul), each with its gradient. stash_type 1 (the default) computes a
// float16 X in float32.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::StatusOr<std::string> EmitBinary(NodeContext& context, const char* type,
                                       const std::string& x,
                                       const std::string& y,
                                       absl::string_view hint) {
  const std::string out = context.Temp(hint);
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder(type).In("X", x).In("Y", y).Out("Out", out)));
  return out;
}

absl::StatusOr<std::string> EmitCast(NodeContext& context, const std::string& x,
                                     DataType dtype, absl::string_view hint) {
  const std::string out = context.Temp(hint);
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("cast")
                       .In("X", x)
                       .Out("Out", out)
                       .Attr("out_dtype", static_cast<int32_t>(dtype))));
  return out;
}

absl::Status ConvertRmsNormalization(NodeContext& context) {
  SF_CHECK(context.opset() >= 23,
           "ONNX RMSNormalization exists from opset 23 on: the model imports "
           "opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", -1));
  SF_ASSIGN_OR_RETURN(const float epsilon, context.FloatAttr("epsilon", 1e-5f));
  SF_ASSIGN_OR_RETURN(const int64_t stash_type,
                      context.IntAttr("stash_type", 1));
  const VarInfo info = context.InputInfo(0);
  if (!info.has_dims) {
    return Unsupported(
        "the axes normalized run from \"axis\" to the last, which needs the "
        "rank of input 0, unknown here");
  }
  const int64_t rank = static_cast<int64_t>(info.dims.size());
  SF_CHECK(axis >= -rank && axis < rank,
           "attribute \"axis\" = %d is out of range for rank %d", axis, rank);
  std::vector<int64_t> axes;
  for (int64_t a = axis < 0 ? axis + rank : axis; a < rank; ++a) {
    axes.push_back(a);
  }
  SF_ASSIGN_OR_RETURN(std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string scale, context.Input(1));
  const bool stash = info.dtype == kFloat16 && stash_type == 1;
  if (stash) {
    SF_ASSIGN_OR_RETURN(x, EmitCast(context, x, kFloat32, "x32"));
  }
  SF_ASSIGN_OR_RETURN(const std::string squares,
                      EmitBinary(context, "mul", x, x, "squares"));
  const std::string mean = context.Temp("mean_square");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("reduce_mean")
                                      .In("X", squares)
                                      .Out("Out", mean)
                                      .Attr("axes", axes)
                                      .Attr("keep_dim", true)));
  const std::string shifted = context.Temp("mean_square_eps");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("scale")
                                      .In("X", mean)
                                      .Out("Out", shifted)
                                      .Attr("bias", epsilon)));
  const std::string rms = context.Temp("rms");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("sqrt").In("X", shifted).Out("Out", rms)));
  SF_ASSIGN_OR_RETURN(std::string normalized,
                      EmitBinary(context, "div", x, rms, "normalized"));
  if (stash) {
    SF_ASSIGN_OR_RETURN(
        normalized, EmitCast(context, normalized, kFloat16, "normalized16"));
  }
  return context.Emit(OpBuilder("mul")
                          .In("X", normalized)
                          .In("Y", scale)
                          .Out("Out", context.Output(0)));
}

}  // namespace

void AddRmsNormConverters(ConverterMap& map) {
  map["RMSNormalization"] = &ConvertRmsNormalization;
}

}  // namespace onnx_import
}  // namespace scopeflow
