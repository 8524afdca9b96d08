// Converter of ONNX's RotaryEmbedding onto the rotary_embedding op.
#include <cstdint>
#include <string>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// RotaryEmbedding (23): the position ids are an optional input, read at run
// time.
absl::Status ConvertRotaryEmbedding(NodeContext& context) {
  SF_CHECK(context.opset() >= 23,
           "ONNX %s exists from opset 23 on: the model imports opset %d",
           context.op_type(), context.opset());
  SF_ASSIGN_OR_RETURN(const int64_t interleaved,
                      context.IntAttr("interleaved", 0));
  SF_ASSIGN_OR_RETURN(const int64_t num_heads, context.IntAttr("num_heads", 0));
  SF_ASSIGN_OR_RETURN(const int64_t rotary_dim,
                      context.IntAttr("rotary_embedding_dim", 0));
  SF_ASSIGN_OR_RETURN(const int32_t num_heads32,
                      ToInt32(num_heads, "attribute num_heads"));
  SF_ASSIGN_OR_RETURN(const int32_t rotary_dim32,
                      ToInt32(rotary_dim, "attribute rotary_embedding_dim"));
  OpBuilder op("rotary_embedding");
  const char* slots[] = {"X", "CosCache", "SinCache"};
  for (int i = 0; i < 3; ++i) {
    SF_ASSIGN_OR_RETURN(const std::string var, context.Input(i));
    op.In(slots[i], var);
  }
  if (context.HasInput(3)) {
    SF_ASSIGN_OR_RETURN(const std::string ids, context.Input(3));
    op.In("PositionIds", ids);
  }
  return context.Emit(op.Out("Out", context.Output(0))
                          .Attr("interleaved", interleaved != 0)
                          .Attr("num_heads", num_heads32)
                          .Attr("rotary_embedding_dim", rotary_dim32));
}

}  // namespace

void AddRotaryConverters(ConverterMap& map) {
  map["RotaryEmbedding"] = &ConvertRotaryEmbedding;
}

}  // namespace onnx_import
}  // namespace scopeflow
