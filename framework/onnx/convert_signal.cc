// Converters of ONNX's signal-processing ops: DFT, STFT and MelWeightMatrix,
// each onto the scopeflow op of the same meaning.
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

// DFT (17): the axis is attribute "axis" (default 1); 20 makes it an
// optional input (default -2, the last signal dimension). A constant axis
// input becomes the attribute, so that Prepare knows Out's shape; a fed
// one is read at run time. dft_length stays an input, read at run time.
absl::Status ConvertDft(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 17));
  SF_ASSIGN_OR_RETURN(const int64_t inverse, context.IntAttr("inverse", 0));
  SF_ASSIGN_OR_RETURN(const int64_t onesided, context.IntAttr("onesided", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("dft");
  op.In("X", x).Out("Out", context.Output(0));
  if (context.HasInput(1)) {
    SF_ASSIGN_OR_RETURN(const std::string length, context.Input(1));
    op.In("DftLength", length);
  }
  int64_t axis = 1;
  if (context.opset() < 20) {
    SF_ASSIGN_OR_RETURN(axis, context.IntAttr("axis", 1));
  } else {
    axis = -2;
    if (context.HasInput(2) && context.IsConstant(2)) {
      SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                          context.ConstantInts(2, "it is DFT's axis"));
      SF_CHECK(axes.size() == 1, "DFT's axis input has %d values: expected 1",
               axes.size());
      axis = axes[0];
    } else if (context.HasInput(2)) {
      SF_ASSIGN_OR_RETURN(const std::string axis_var, context.Input(2));
      op.In("Axis", axis_var);
    }
  }
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "attribute axis"));
  return context.Emit(op.Attr("axis", axis32)
                          .Attr("inverse", inverse != 0)
                          .Attr("onesided", onesided != 0));
}

// STFT (17): frame_step, window and frame_length are inputs, read at run
// time.
absl::Status ConvertStft(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 17));
  SF_ASSIGN_OR_RETURN(const int64_t onesided, context.IntAttr("onesided", 1));
  SF_ASSIGN_OR_RETURN(const std::string signal, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string step, context.Input(1));
  OpBuilder op("stft");
  op.In("Signal", signal).In("FrameStep", step);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string window, context.Input(2));
    op.In("Window", window);
  }
  if (context.HasInput(3)) {
    SF_ASSIGN_OR_RETURN(const std::string length, context.Input(3));
    op.In("FrameLength", length);
  }
  return context.Emit(
      op.Out("Out", context.Output(0)).Attr("onesided", onesided != 0));
}

// MelWeightMatrix (17): "output_datatype" is an ONNX element type, float or
// double here.
absl::Status ConvertMelWeightMatrix(NodeContext& context) {
  SF_RETURN_IF_ERROR(RequireOpset(context, 17));
  SF_ASSIGN_OR_RETURN(const int64_t onnx_dtype,
                      context.IntAttr("output_datatype", 1));
  SF_ASSIGN_OR_RETURN(const DataType dtype,
                      DataTypeFromOnnx(static_cast<int32_t>(onnx_dtype)));
  OpBuilder op("mel_weight_matrix");
  const char* slots[] = {"NumMelBins", "DftLength", "SampleRate",
                         "LowerEdgeHertz", "UpperEdgeHertz"};
  for (int i = 0; i < 5; ++i) {
    SF_ASSIGN_OR_RETURN(const std::string var, context.Input(i));
    op.In(slots[i], var);
  }
  return context.Emit(op.Out("Out", context.Output(0))
                          .Attr("out_dtype", static_cast<int32_t>(dtype)));
}

}  // namespace

void AddSignalConverters(ConverterMap& map) {
  map["DFT"] = &ConvertDft;
  map["STFT"] = &ConvertStft;
  map["MelWeightMatrix"] = &ConvertMelWeightMatrix;
}

}  // namespace onnx_import
}  // namespace scopeflow
