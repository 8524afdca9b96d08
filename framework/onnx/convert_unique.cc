// Converter of ONNX's Unique onto the unique op.
#include <cstdint>
#include <string>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// Unique (11): without "axis" the input is flattened. Each optional output
// is bound only where the node names it.
absl::Status ConvertUnique(NodeContext& context) {
  SF_CHECK(context.opset() >= 11,
           "ONNX %s exists from opset 11 on: the model imports opset %d",
           context.op_type(), context.opset());
  SF_ASSIGN_OR_RETURN(const int64_t sorted, context.IntAttr("sorted", 1));
  const bool flatten = !context.HasAttr("axis");
  int64_t axis = 0;
  if (!flatten) {
    SF_ASSIGN_OR_RETURN(axis, context.IntAttr("axis"));
  }
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "attribute axis"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("unique");
  op.In("X", x).Out("Out", context.Output(0));
  const char* slots[] = {"Indices", "InverseIndices", "Counts"};
  for (int i = 1; i <= 3; ++i) {
    if (context.HasOutput(i)) op.Out(slots[i - 1], context.Output(i));
  }
  return context.Emit(op.Attr("sorted", sorted != 0)
                          .Attr("flatten", flatten)
                          .Attr("axis", axis32));
}

}  // namespace

void AddUniqueConverters(ConverterMap& map) { map["Unique"] = &ConvertUnique; }

}  // namespace onnx_import
}  // namespace scopeflow
