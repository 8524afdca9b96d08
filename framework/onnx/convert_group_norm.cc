// Converters of ONNX InstanceNormalization and GroupNormalization onto
// scopeflow's instance_norm and group_norm.
#include <cstdint>
#include <string>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::Status ConvertInstanceNorm(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float epsilon, context.FloatAttr("epsilon", 1e-5f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string scale, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string bias, context.Input(2));
  return context.Emit(OpBuilder("instance_norm")
                          .In("X", x)
                          .In("Scale", scale)
                          .In("Bias", bias)
                          .Out("Y", context.Output(0))
                          .Attr("epsilon", epsilon));
}

// GroupNormalization 18 scales and shifts per group, 21 per channel;
// group_norm takes either, telling them apart by Scale's length, so the
// converter holds each opset to its own. stash_type (21) asks for float32
// statistics at least; group_norm's are float64.
absl::Status ConvertGroupNorm(NodeContext& context) {
  SF_CHECK(context.opset() >= 18,
           "ONNX GroupNormalization exists from opset 18 on: the model "
           "imports opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const int64_t groups, context.IntAttr("num_groups"));
  SF_ASSIGN_OR_RETURN(const int32_t groups32,
                      ToInt32(groups, "attribute num_groups"));
  SF_ASSIGN_OR_RETURN(const float epsilon, context.FloatAttr("epsilon", 1e-5f));
  const bool per_channel = context.opset() >= 21;
  if (per_channel) {
    SF_ASSIGN_OR_RETURN(const int64_t stash_type,
                        context.IntAttr("stash_type", 1));
    (void)stash_type;
  }
  const VarInfo x = context.InputInfo(0);
  const int64_t channels = x.has_dims && x.dims.size() >= 2 ? x.dims[1] : -1;
  const int64_t expected = per_channel ? channels : groups;
  for (int i : {1, 2}) {
    const VarInfo info = context.InputInfo(i);
    if (expected < 0 || !info.has_dims || info.dims.size() != 1 ||
        info.dims[0] < 0) {
      continue;
    }
    SF_CHECK(info.dims[0] == expected,
             "input %d (\"%s\") has %d values: GroupNormalization %s expects "
             "%d, one per %s",
             i, context.InputName(i), info.dims[0],
             per_channel ? "from opset 21" : "before opset 21", expected,
             per_channel ? "channel" : "group");
  }
  SF_ASSIGN_OR_RETURN(const std::string input, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string scale, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string bias, context.Input(2));
  return context.Emit(OpBuilder("group_norm")
                          .In("X", input)
                          .In("Scale", scale)
                          .In("Bias", bias)
                          .Out("Y", context.Output(0))
                          .Attr("groups", groups32)
                          .Attr("epsilon", epsilon));
}

}  // namespace

void AddGroupNormConverters(ConverterMap& map) {
  map["InstanceNormalization"] = &ConvertInstanceNorm;
  map["GroupNormalization"] = &ConvertGroupNorm;
}

}  // namespace onnx_import
}  // namespace scopeflow
