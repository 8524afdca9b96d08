// Converters of ONNX's indexing ops: GatherElements, ScatterElements (and
// Scatter before opset 11), GatherND, ScatterND, TopK and NonZero.
#include <cstdint>
#include <string>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::Status ConvertGatherElements(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string index, context.Input(1));
  return context.Emit(OpBuilder("gather_elements")
                          .In("X", x)
                          .In("Index", index)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis));
}

}  // namespace

void AddIndexingConverters(ConverterMap& map) {
  map["GatherElements"] = &ConvertGatherElements;
}

}  // namespace onnx_import
}  // namespace scopeflow
