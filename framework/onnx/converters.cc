#include "framework/onnx/converters.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/onnx/old_opsets.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

ConverterMap MakeConverters() {
  ConverterMap map;
  AddElementwiseConverters(map);
  AddNnConverters(map);
  AddShapeConverters(map);
  AddReduceConverters(map);
  AddResizeConverters(map);
  AddConvTransposeConverters(map);
  AddRecurrentConverters(map);
  AddMoreElementwiseConverters(map);
  AddControlFlowConverters(map);
  AddSequenceConverters(map);
  AddIndexingConverters(map);
  AddTensorOpConverters(map);
  AddGroupNormConverters(map);
  AddDetectionConverters(map);
  AddQuantizationConverters(map);
  AddLossConverters(map);
  AddRmsNormConverters(map);
  AddAttentionConverters(map);
  AddComposedConverters(map);
  AddCausalConvConverters(map);
  AddSpatialConverters(map);
  AddSignalConverters(map);
  AddRotaryConverters(map);
  AddUniqueConverters(map);
  AddTfIdfConverters(map);
  AddDetScatterConverters(map);
  AddOptionalConverters(map);
  return map;
}

bool IsDefaultDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

}  // namespace

absl::Status RequireOpset(const NodeContext& context, int64_t since) {
  SF_CHECK(context.opset() >= since,
           "ONNX %s exists from opset %d on: the model imports opset %d",
           context.op_type(), since, context.opset());
  return absl::OkStatus();
}

absl::Status ConvertNode(const onnx::NodeProto& node, NodeContext& context) {
  const GraphState& state = context.graph_state();
  if (!IsDefaultDomain(node.domain())) {
    return Unsupported(absl::StrFormat(
        "domain \"%s\": only the default ONNX domain is supported",
        node.domain()));
  }
  SF_RETURN_IF_ERROR(CheckOldOpset(node.op_type(), state.opset));
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string& name = node.input(i);
    if (name.empty()) continue;
    if (!state.infos.contains(name) && !state.constants.contains(name) &&
        !state.bad_constants.contains(name) && !state.tainted.contains(name) &&
        !state.sequences.contains(name)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "input %d (\"%s\") is no graph input or initializer, nor the "
          "output of an earlier node (nodes must be in topological order)",
          i, name));
    }
  }
  // Sequences exist only as what the sequence-aware converters make of
  // them (framework/onnx/convert_sequence.cc).
  if (node.op_type() != "Loop" && node.op_type() != "ConcatFromSequence") {
    for (int i = 0; i < node.input_size(); ++i) {
      if (!state.sequences.contains(node.input(i))) continue;
      return Unsupported(absl::StrFormat(
          "input %d (\"%s\") is a sequence, which scopeflow has no "
          "equivalent of (only the stacking of a sequence a Loop appends to "
          "converts)",
          i, node.input(i)));
    }
  }
  // Every ONNX node makes at least one value (optional outputs, LSTM's Y
  // among them, may be left empty), and converters name their ops' outputs
  // after the node's.
  if (std::all_of(node.output().begin(), node.output().end(),
                  [](const std::string& output) { return output.empty(); })) {
    return absl::InvalidArgumentError(
        "the node has no output (ONNX nodes make at least one value)");
  }
  auto converter = Converters().find(node.op_type());
  if (converter == Converters().end()) {
    return Unsupported(NoConverterReason(node.op_type()));
  }
  SF_RETURN_IF_ERROR(converter->second(context));
  const std::vector<std::string> unread = context.UnreadAttrs();
  if (!unread.empty()) {
    return Unsupported(absl::StrFormat(
        "attribute%s %s not supported by the conversion",
        unread.size() > 1 ? "s" : "",
        absl::StrCat("\"", absl::StrJoin(unread, "\", \""), "\"")));
  }
  return context.Commit();
}

const ConverterMap& Converters() {
  // Built on first use (thread-safe), as OpRegistry::Global() is.
  static const ConverterMap map = MakeConverters();
  return map;
}

std::string NoConverterReason(const std::string& op_type) {
  return absl::StrCat("no converter for ONNX op ", op_type,
                      " (scopeflow has no matching op)");
}

}  // namespace onnx_import
}  // namespace scopeflow
