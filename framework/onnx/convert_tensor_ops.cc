// Converters of ONNX ops that generate, scan or rearrange tensors: Range,
// CumSum, OneHot, Trilu, DepthToSpace, SpaceToDepth and Einsum, each onto
// the scopeflow op of the same meaning.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// OK unless the model's opset predates the op (`since`): a node the opset
// does not define is malformed.
absl::Status RequireOpset(const NodeContext& context, int64_t since) {
  SF_CHECK(context.opset() >= since,
           "ONNX %s exists from opset %d on: the model imports opset %d",
           context.op_type(), since, context.opset());
  return absl::OkStatus();
}

// Range (11): start, limit and delta are scalars of one dtype.
absl::Status ConvertRange(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 11));
  SF_ASSIGN_OR_RETURN(const std::string start, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string limit, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string delta, context.Input(2));
  return context.Emit(OpBuilder("range")
                          .In("Start", start)
                          .In("Limit", limit)
                          .In("Delta", delta)
                          .Out("Out", context.Output(0)));
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

}  // namespace

void AddTensorOpConverters(ConverterMap& map) {
  map["Range"] = &ConvertRange;
  map["CumSum"] = &ConvertCumSum;
}

}  // namespace onnx_import
}  // namespace scopeflow
