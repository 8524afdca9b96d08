// Converters of ONNX's loss ops: NegativeLogLikelihoodLoss onto nll_loss,
// and SoftmaxCrossEntropyLoss onto log_softmax over the class axis 1 then
// nll_loss, which is how ONNX defines it (its function body).
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// nll_loss of `x` (log-probabilities) into output 0, with the node's
// labels (input 1), optional weights (input 2), "reduction" and
// "ignore_index".
absl::Status EmitNllLoss(NodeContext& context, const std::string& x) {
  SF_ASSIGN_OR_RETURN(const std::string reduction,
                      context.StringAttr("reduction", "mean"));
  SF_CHECK(reduction == "none" || reduction == "sum" || reduction == "mean",
           "attribute \"reduction\" = \"%s\": expected \"none\", \"sum\" or "
           "\"mean\"",
           reduction);
  SF_ASSIGN_OR_RETURN(const std::string label, context.Input(1));
  OpBuilder op("nll_loss");
  op.In("X", x).In("Label", label).Out("Out", context.Output(0));
  op.Attr("reduction", reduction);
  if (context.HasAttr("ignore_index")) {
    SF_ASSIGN_OR_RETURN(const int64_t ignore_index,
                        context.IntAttr("ignore_index"));
    op.Attr("ignore_index", ignore_index);
  }
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string weight, context.Input(2));
    op.In("Weight", weight);
  }
  return context.Emit(op);
}

// NegativeLogLikelihoodLoss (12; 13 and 22 widened the dtypes).
absl::Status ConvertNllLoss(NodeContext& context) {
  SF_CHECK(context.opset() >= 12,
           "ONNX NegativeLogLikelihoodLoss exists from opset 12 on: the "
           "model imports opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return EmitNllLoss(context, x);
}

// SoftmaxCrossEntropyLoss (12; 13 widened the dtypes): its optional second
// output is the log_softmax.
absl::Status ConvertSoftmaxCrossEntropyLoss(NodeContext& context) {
  SF_CHECK(context.opset() >= 12,
           "ONNX SoftmaxCrossEntropyLoss exists from opset 12 on: the model "
           "imports opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const std::string scores, context.Input(0));
  const std::string log_prob =
      context.HasOutput(1) ? context.Output(1) : context.Temp("log_prob");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("log_softmax")
                                      .In("X", scores)
                                      .Out("Out", log_prob)
                                      .Attr("axis", int64_t{1})));
  return EmitNllLoss(context, log_prob);
}

}  // namespace

void AddLossConverters(ConverterMap& map) {
  map["NegativeLogLikelihoodLoss"] = &ConvertNllLoss;
  map["SoftmaxCrossEntropyLoss"] = &ConvertSoftmaxCrossEntropyLoss;
}

}  // namespace onnx_import
}  // namespace scopeflow
