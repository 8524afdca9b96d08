// The converter of ONNX's CausalConvWithState (27): a causal depthwise 1-D
// convolution that carries its last k - 1 input positions from step to
// step. Emitted as the ops it fuses: the past state (zeros without one)
// concatenated before the input, a depthwise conv2d over the result seen
// as [N, C, 1, k - 1 + L] (groups = C, no padding), the optional bias and
// SiLU ("silu" or "swish"), and the last k - 1 positions of the
// concatenation as present_state. Needs the input's and the weight's dims.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::Status ConvertCausalConvWithState(NodeContext& context) {
  SF_CHECK(context.opset() >= 27,
           "ONNX CausalConvWithState exists from opset 27 on: the model "
           "imports opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const std::string activation,
                      context.StringAttr("activation", "none"));
  SF_CHECK(
      activation == "none" || activation == "silu" || activation == "swish",
      "attribute \"activation\" = \"%s\": expected \"none\", \"silu\" or "
      "\"swish\"",
      activation);
  const VarInfo x_info = context.InputInfo(0);
  const VarInfo w_info = context.InputInfo(1);
  if (!x_info.has_dims || x_info.dims.size() != 3 || !w_info.has_dims ||
      w_info.dims.size() != 3) {
    return Unsupported(
        "the conversion needs the dims of input [N, C, L] and weight [C, 1, "
        "k]");
  }
  const int64_t batch = x_info.dims[0];
  const int64_t channels = x_info.dims[1];
  const int64_t length = x_info.dims[2];
  const int64_t k = w_info.dims[2];
  if (batch < 0 || channels < 0 || length < 0 || k < 1) {
    return Unsupported(
        "the conversion needs the dims of input [N, C, L] and weight [C, 1, "
        "k]");
  }
  SF_CHECK(w_info.dims[0] == channels && w_info.dims[1] == 1,
           "weight has shape %s: expected [%d, 1, k], one kernel per channel",
           DimsToString(w_info.dims), channels);
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string w, context.Input(1));
  const Dims state_dims = {batch, channels, k - 1};
  std::string padded = x;
  if (k > 1) {
    std::string past;
    if (context.HasInput(3)) {
      SF_ASSIGN_OR_RETURN(past, context.Input(3));
    } else {
      if (x_info.dtype != kFloat32 && x_info.dtype != kFloat64) {
        return Unsupported(
            absl::StrFormat("CausalConvWithState of %s is not converted",
                            DataTypeName(x_info.dtype)));
      }
      Tensor zeros;
      SF_RETURN_IF_ERROR(zeros.Allocate(CPUPlace(), x_info.dtype, state_dims));
      std::memset(zeros.raw_data(), 0, zeros.nbytes());
      past = context.AddConstant("zero_state", std::move(zeros));
    }
    padded = context.Temp("padded");
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("concat")
                         .In("X", std::vector<std::string>{past, x})
                         .Out("Out", padded)
                         .Attr("axis", int32_t{2})));
  }
  if (context.HasOutput(1)) {
    if (k == 1) {
      Tensor empty;
      SF_RETURN_IF_ERROR(empty.Allocate(CPUPlace(), x_info.dtype, state_dims));
      context.SetConstantOutput(1, std::move(empty));
    } else {
      SF_RETURN_IF_ERROR(
          context.Emit(OpBuilder("slice")
                           .In("X", padded)
                           .Out("Out", context.Output(1))
                           .Attr("axes", std::vector<int32_t>{2})
                           .Attr("starts", ClampToInt32({length}))
                           .Attr("ends", ClampToInt32({length + k - 1}))));
    }
  }
  const std::string input = context.Temp("input_2d");
  const std::string filter = context.Temp("filter_2d");
  for (const auto& [from, to] :
       {std::pair(padded, input), std::pair(w, filter)}) {
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("unsqueeze")
                         .In("X", from)
                         .Out("Out", to)
                         .Attr("axes", std::vector<int32_t>{2})));
  }
  SF_ASSIGN_OR_RETURN(const int32_t groups, ToInt32(channels, "channels"));
  const std::string convolved = context.Temp("convolved_2d");
  OpBuilder conv("conv2d");
  conv.In("Input", input).In("Filter", filter);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string bias, context.Input(2));
    conv.In("Bias", bias);
  }
  conv.Out("Output", convolved)
      .Attr("strides", std::vector<int32_t>{1, 1})
      .Attr("paddings", std::vector<int32_t>{0, 0, 0, 0})
      .Attr("dilations", std::vector<int32_t>{1, 1})
      .Attr("groups", groups);
  SF_RETURN_IF_ERROR(context.Emit(conv));
  const std::string y =
      activation == "none" ? context.Output(0) : context.Temp("convolved");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("squeeze")
                                      .In("X", convolved)
                                      .Out("Out", y)
                                      .Attr("axes", std::vector<int32_t>{2})));
  if (activation == "none") return absl::OkStatus();
  return context.Emit(
      OpBuilder("silu").In("X", y).Out("Out", context.Output(0)));
}

}  // namespace

void AddCausalConvConverters(ConverterMap& map) {
  map["CausalConvWithState"] = &ConvertCausalConvWithState;
}

}  // namespace onnx_import
}  // namespace scopeflow
