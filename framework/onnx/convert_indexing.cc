// Converters of ONNX's indexing ops: GatherElements, ScatterElements (and
// Scatter before opset 11), GatherND, ScatterND, TopK and NonZero.
#include <cstdint>
#include <string>
#include <vector>

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

// The reductions ScatterElements and ScatterND know at the model's opset:
// none before 16, "none", "add" and "mul" from 16, "max" and "min" too
// from 18.
absl::StatusOr<std::string> ScatterReduction(NodeContext& context) {
  if (context.opset() < 16) return std::string("none");
  SF_ASSIGN_OR_RETURN(const std::string reduction,
                      context.StringAttr("reduction", "none"));
  const bool known =
      reduction == "none" || reduction == "add" || reduction == "mul" ||
      (context.opset() >= 18 && (reduction == "max" || reduction == "min"));
  SF_CHECK(known, "attribute \"reduction\" is \"%s\": expected %s at opset %d",
           reduction,
           context.opset() >= 18
               ? "\"none\", \"add\", \"mul\", \"max\" or \"min\""
               : "\"none\", \"add\" or \"mul\"",
           context.opset());
  return reduction;
}

// ScatterElements, and Scatter (opsets 9 and 10), which is ScatterElements
// without reductions.
absl::Status ConvertScatterElements(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 0));
  SF_ASSIGN_OR_RETURN(const std::string reduction, ScatterReduction(context));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string index, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string updates, context.Input(2));
  return context.Emit(OpBuilder("scatter_elements")
                          .In("X", x)
                          .In("Index", index)
                          .In("Updates", updates)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis)
                          .Attr("reduction", reduction));
}

// GatherND took "batch_dims" at opset 12.
absl::Status ConvertGatherNd(NodeContext& context) {
  int64_t batch_dims = 0;
  if (context.opset() >= 12) {
    SF_ASSIGN_OR_RETURN(batch_dims, context.IntAttr("batch_dims", 0));
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string index, context.Input(1));
  return context.Emit(OpBuilder("gather_nd")
                          .In("X", x)
                          .In("Index", index)
                          .Out("Out", context.Output(0))
                          .Attr("batch_dims", batch_dims));
}

absl::Status ConvertScatterNd(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string reduction, ScatterReduction(context));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string index, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string updates, context.Input(2));
  return context.Emit(OpBuilder("scatter_nd")
                          .In("X", x)
                          .In("Index", index)
                          .In("Updates", updates)
                          .Out("Out", context.Output(0))
                          .Attr("reduction", reduction));
}

// TopK: k is attribute "k" before opset 10 and input 1 since (folded into
// the attribute when constant); "largest" and "sorted" came at opset 11.
// top_k always sorts, which "sorted" = 0 allows (it leaves the order
// unspecified).
absl::Status ConvertTopK(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", -1));
  int64_t largest = 1;
  if (context.opset() >= 11) {
    SF_ASSIGN_OR_RETURN(largest, context.IntAttr("largest", 1));
    SF_ASSIGN_OR_RETURN(const int64_t sorted, context.IntAttr("sorted", 1));
    SF_CHECK(sorted == 0 || sorted == 1,
             "attribute \"sorted\" is %d: expected 0 or 1", sorted);
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("top_k");
  op.In("X", x)
      .Out("Out", context.Output(0))
      .Out("Indices", context.Output(1))
      .Attr("axis", axis)
      .Attr("largest", largest != 0);
  if (context.opset() < 10) {
    SF_ASSIGN_OR_RETURN(const int64_t k, context.IntAttr("k"));
    op.Attr("k", k);
  } else if (context.IsConstant(1)) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> k,
                        context.ConstantInts(1, "it gives k"));
    SF_CHECK(k.size() == 1, "input 1 (K) holds %d values: expected one",
             k.size());
    op.Attr("k", k[0]);
  } else {
    SF_ASSIGN_OR_RETURN(const std::string k, context.Input(1));
    op.In("K", k);
  }
  return context.Emit(op);
}

absl::Status ConvertNonZero(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder("non_zero").In("X", x).Out("Out", context.Output(0)));
}

}  // namespace

void AddIndexingConverters(ConverterMap& map) {
  map["GatherElements"] = &ConvertGatherElements;
  map["ScatterElements"] = &ConvertScatterElements;
  map["Scatter"] = &ConvertScatterElements;
  map["GatherND"] = &ConvertGatherNd;
  map["ScatterND"] = &ConvertScatterNd;
  map["TopK"] = &ConvertTopK;
  map["NonZero"] = &ConvertNonZero;
}

}  // namespace onnx_import
}  // namespace scopeflow
