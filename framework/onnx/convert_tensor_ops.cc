// Converters of ONNX ops that generate, scan or rearrange tensors: Range,
// CumSum, CumProd, OneHot, Trilu, DepthToSpace, SpaceToDepth, Einsum and
// the windows (HannWindow, HammingWindow, BlackmanWindow), each onto the
// scopeflow op of the same meaning.
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

// A cast of `var` to `dtype`, into a fresh variable named after `hint`.
absl::StatusOr<std::string> EmitCast(NodeContext& context,
                                     const std::string& var, DataType dtype,
                                     absl::string_view hint) {
  const std::string out = context.Temp(hint);
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("cast")
                       .In("X", var)
                       .Out("Out", out)
                       .Attr("out_dtype", static_cast<int32_t>(dtype))));
  return out;
}

// Range (11): start, limit and delta are scalars of one dtype. 27 adds
// stash_type: float16 (and bfloat16) inputs are computed in float32 when it
// is 1 (the default) and cast back; other dtypes are unaffected.
absl::Status ConvertRange(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 11));
  int64_t stash_type = 0;
  if (context.opset() >= 27) {
    SF_ASSIGN_OR_RETURN(stash_type, context.IntAttr("stash_type", 1));
  }
  SF_ASSIGN_OR_RETURN(std::string start, context.Input(0));
  SF_ASSIGN_OR_RETURN(std::string limit, context.Input(1));
  SF_ASSIGN_OR_RETURN(std::string delta, context.Input(2));
  const DataType dtype = context.InputInfo(0).dtype;
  if ((dtype != kFloat16 && dtype != kBFloat16) || stash_type != 1) {
    return context.Emit(OpBuilder("range")
                            .In("Start", start)
                            .In("Limit", limit)
                            .In("Delta", delta)
                            .Out("Out", context.Output(0)));
  }
  SF_ASSIGN_OR_RETURN(start, EmitCast(context, start, kFloat32, "start"));
  SF_ASSIGN_OR_RETURN(limit, EmitCast(context, limit, kFloat32, "limit"));
  SF_ASSIGN_OR_RETURN(delta, EmitCast(context, delta, kFloat32, "delta"));
  const std::string stashed = context.Temp("range");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("range")
                                      .In("Start", start)
                                      .In("Limit", limit)
                                      .In("Delta", delta)
                                      .Out("Out", stashed)));
  return context.Emit(OpBuilder("cast")
                          .In("X", stashed)
                          .Out("Out", context.Output(0))
                          .Attr("out_dtype", static_cast<int32_t>(dtype)));
}

// CumSum (11; 14 widened the dtypes): the axis is an input, which cumsum
// reads at run time as well.
absl::Status ConvertCumSum(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 11));
  SF_ASSIGN_OR_RETURN(const int64_t exclusive, context.IntAttr("exclusive", 0));
  SF_ASSIGN_OR_RETURN(const int64_t reverse, context.IntAttr("reverse", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string axis, context.Input(1));
  return context.Emit(OpBuilder("cumsum")
                          .In("X", x)
                          .In("Axis", axis)
                          .Out("Out", context.Output(0))
                          .Attr("exclusive", exclusive != 0)
                          .Attr("reverse", reverse != 0));
}

// CumProd (26): as CumSum, with products.
absl::Status ConvertCumProd(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 26));
  SF_ASSIGN_OR_RETURN(const int64_t exclusive, context.IntAttr("exclusive", 0));
  SF_ASSIGN_OR_RETURN(const int64_t reverse, context.IntAttr("reverse", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string axis, context.Input(1));
  return context.Emit(OpBuilder("cumprod")
                          .In("X", x)
                          .In("Axis", axis)
                          .Out("Out", context.Output(0))
                          .Attr("exclusive", exclusive != 0)
                          .Attr("reverse", reverse != 0));
}

// OneHot (9; 11 let indices count from the end, which one_hot always
// does: a negative index is out of range at opset 9 and the model
// malformed, so no valid model reads differently).
absl::Status ConvertOneHot(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 9));
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", -1));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "attribute axis"));
  SF_ASSIGN_OR_RETURN(const std::string indices, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string depth, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string values, context.Input(2));
  return context.Emit(OpBuilder("one_hot")
                          .In("Indices", indices)
                          .In("Depth", depth)
                          .In("Values", values)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis32));
}

// Trilu (14): k, when given, is an int64 scalar input.
absl::Status ConvertTrilu(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 14));
  SF_ASSIGN_OR_RETURN(const int64_t upper, context.IntAttr("upper", 1));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("trilu");
  op.In("X", x).Out("Out", context.Output(0)).Attr("upper", upper != 0);
  if (context.HasInput(1)) {
    SF_ASSIGN_OR_RETURN(const std::string k, context.Input(1));
    op.In("K", k);
  }
  return context.Emit(op);
}

// DepthToSpace: "mode" exists from opset 11 (DCR, the order before it, or
// CRD); an older model carrying it is left with the attribute unread, which
// the importer rejects. SpaceToDepth has DCR's order only.
absl::Status ConvertBlockOp(NodeContext& context, const char* type,
                            bool has_mode) {
  SF_ASSIGN_OR_RETURN(const int64_t blocksize, context.IntAttr("blocksize"));
  SF_ASSIGN_OR_RETURN(const int32_t block32,
                      ToInt32(blocksize, "attribute blocksize"));
  std::string mode = "DCR";
  if (has_mode) {
    SF_ASSIGN_OR_RETURN(mode, context.StringAttr("mode", std::string("DCR")));
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder(type)
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("blocksize", block32)
                          .Attr("mode", mode));
}

absl::Status ConvertDepthToSpace(NodeContext& context) {
  return ConvertBlockOp(context, "depth_to_space", context.opset() >= 11);
}

absl::Status ConvertSpaceToDepth(NodeContext& context) {
  return ConvertBlockOp(context, "space_to_depth", false);
}

// Einsum (12): the equation as written; einsum checks it.
absl::Status ConvertEinsum(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 12));
  SF_ASSIGN_OR_RETURN(const std::string equation,
                      context.StringAttr("equation"));
  std::vector<std::string> operands;
  for (int i = 0; i < context.InputCount(); ++i) {
    SF_ASSIGN_OR_RETURN(const std::string operand, context.Input(i));
    operands.push_back(operand);
  }
  return context.Emit(OpBuilder("einsum")
                          .In("Operands", operands)
                          .Out("Out", context.Output(0))
                          .Attr("equation", equation));
}

// HannWindow, HammingWindow and BlackmanWindow (17): the window op of that
// kind; "output_datatype" is an ONNX element type, float or double here.
absl::Status ConvertWindow(NodeContext& context, const char* window) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 17));
  SF_ASSIGN_OR_RETURN(const int64_t periodic, context.IntAttr("periodic", 1));
  SF_ASSIGN_OR_RETURN(const int64_t onnx_dtype,
                      context.IntAttr("output_datatype", 1));
  SF_ASSIGN_OR_RETURN(const DataType dtype,
                      DataTypeFromOnnx(static_cast<int32_t>(onnx_dtype)));
  SF_ASSIGN_OR_RETURN(const std::string size, context.Input(0));
  return context.Emit(OpBuilder("window")
                          .In("Size", size)
                          .Out("Out", context.Output(0))
                          .Attr("window", std::string(window))
                          .Attr("periodic", periodic != 0)
                          .Attr("out_dtype", static_cast<int32_t>(dtype)));
}

absl::Status ConvertHannWindow(NodeContext& context) {
  return ConvertWindow(context, "hann");
}

absl::Status ConvertHammingWindow(NodeContext& context) {
  return ConvertWindow(context, "hamming");
}

absl::Status ConvertBlackmanWindow(NodeContext& context) {
  return ConvertWindow(context, "blackman");
}

}  // namespace

void AddTensorOpConverters(ConverterMap& map) {
  map["Range"] = &ConvertRange;
  map["CumSum"] = &ConvertCumSum;
  map["CumProd"] = &ConvertCumProd;
  map["OneHot"] = &ConvertOneHot;
  map["Trilu"] = &ConvertTrilu;
  map["DepthToSpace"] = &ConvertDepthToSpace;
  map["SpaceToDepth"] = &ConvertSpaceToDepth;
  map["Einsum"] = &ConvertEinsum;
  map["HannWindow"] = &ConvertHannWindow;
  map["HammingWindow"] = &ConvertHammingWindow;
  map["BlackmanWindow"] = &ConvertBlackmanWindow;
}

}  // namespace onnx_import
}  // namespace scopeflow
