// Converters of ONNX ops that map one to one onto a scopeflow op of their
// own: Det (det), ReverseSequence (reverse_sequence) and TensorScatter
// (tensor_scatter).
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// Det (11, 22).
absl::Status ConvertDet(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 11));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder("det").In("X", x).Out("Out", context.Output(0)));
}

// ReverseSequence (10).
absl::Status ConvertReverseSequence(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 10));
  SF_ASSIGN_OR_RETURN(const int64_t batch_axis,
                      context.IntAttr("batch_axis", 1));
  SF_ASSIGN_OR_RETURN(const int64_t time_axis, context.IntAttr("time_axis", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string lens, context.Input(1));
  return context.Emit(OpBuilder("reverse_sequence")
                          .In("X", x)
                          .In("SequenceLens", lens)
                          .Out("Out", context.Output(0))
                          .Attr("batch_axis", batch_axis)
                          .Attr("time_axis", time_axis));
}

// TensorScatter (24): write_indices is optional.
absl::Status ConvertTensorScatter(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 24));
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", -2));
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("mode", "linear"));
  SF_ASSIGN_OR_RETURN(const std::string past, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string update, context.Input(1));
  OpBuilder op("tensor_scatter");
  op.In("PastCache", past)
      .In("Update", update)
      .Out("Out", context.Output(0))
      .Attr("axis", axis)
      .Attr("mode", mode);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string indices, context.Input(2));
    op.In("WriteIndices", indices);
  }
  return context.Emit(op);
}

}  // namespace

void AddDetScatterConverters(ConverterMap& map) {
  map["Det"] = &ConvertDet;
  map["ReverseSequence"] = &ConvertReverseSequence;
  map["TensorScatter"] = &ConvertTensorScatter;
}

}  // namespace onnx_import
}  // namespace scopeflow
