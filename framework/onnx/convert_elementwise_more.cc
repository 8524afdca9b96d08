// Converters of more elementwise ONNX ops: the rounding ops (Sign, Floor,
// Ceil, Round), the logical ops (Not, And, Or, Xor), the bitwise ops
// (BitwiseNot, BitwiseAnd, BitwiseOr, BitwiseXor, BitShift), Mod, Mean,
// PRelu and Selu.
#include <string>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/op_spec.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

template <const char* kType>
absl::Status ConvertOneInput(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder(kType).In("X", x).Out("Out", context.Output(0)));
}

// ONNX's logical ops broadcast both ways, as scopeflow's do.
template <const char* kType>
absl::Status ConvertTwoInputs(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string y, context.Input(1));
  return context.Emit(
      OpBuilder(kType).In("X", x).In("Y", y).Out("Out", context.Output(0)));
}

// The mod op checks fmod against the dtype (floats need fmod = 1).
absl::Status ConvertMod(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t fmod, context.IntAttr("fmod", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string y, context.Input(1));
  return context.Emit(OpBuilder("mod")
                          .In("X", x)
                          .In("Y", y)
                          .Out("Out", context.Output(0))
                          .Attr("fmod", static_cast<int32_t>(fmod)));
}

// BitShift (11): X shifted by Y bits, attribute "direction" LEFT or RIGHT.
absl::Status ConvertBitShift(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string direction,
                      context.StringAttr("direction"));
  SF_CHECK(direction == "LEFT" || direction == "RIGHT",
           "attribute \"direction\" = \"%s\": expected \"LEFT\" or \"RIGHT\"",
           direction);
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string y, context.Input(1));
  return context.Emit(OpBuilder("bit_shift")
                          .In("X", x)
                          .In("Y", y)
                          .Out("Out", context.Output(0))
                          .Attr("direction", direction));
}

// Mean of any number of inputs (float only in ONNX): their broadcast sum,
// a chain of adds, scaled by 1 / n.
absl::Status ConvertMean(NodeContext& context) {
  const int n = context.InputCount();
  SF_CHECK(n >= 1, "expected at least one input");
  SF_ASSIGN_OR_RETURN(std::string sum, context.Input(0));
  for (int i = 1; i < n; ++i) {
    SF_ASSIGN_OR_RETURN(const std::string next, context.Input(i));
    const std::string out = context.Temp(absl::StrFormat("sum%d", i));
    SF_RETURN_IF_ERROR(context.Emit(
        OpBuilder("add").In("X", sum).In("Y", next).Out("Out", out)));
    sum = out;
  }
  return context.Emit(OpBuilder("scale")
                          .In("X", sum)
                          .Out("Out", context.Output(0))
                          .Attr("scale", 1.0f / static_cast<float>(n)));
}

// PRelu's slope broadcasts to X (unidirectionally), as scopeflow's prelu
// checks.
absl::Status ConvertPRelu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string slope, context.Input(1));
  return context.Emit(OpBuilder("prelu")
                          .In("X", x)
                          .In("Slope", slope)
                          .Out("Out", context.Output(0)));
}

absl::Status ConvertSelu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha,
                      context.FloatAttr("alpha", 1.67326319217681884765625f));
  SF_ASSIGN_OR_RETURN(const float gamma,
                      context.FloatAttr("gamma", 1.05070102214813232421875f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("selu")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("alpha", alpha)
                          .Attr("gamma", gamma));
}

constexpr char kSign[] = "sign";
constexpr char kFloor[] = "floor";
constexpr char kCeil[] = "ceil";
constexpr char kRound[] = "round";
constexpr char kNot[] = "logical_not";
constexpr char kAnd[] = "logical_and";
constexpr char kOr[] = "logical_or";
constexpr char kXor[] = "logical_xor";
constexpr char kBitwiseNot[] = "bitwise_not";
constexpr char kBitwiseAnd[] = "bitwise_and";
constexpr char kBitwiseOr[] = "bitwise_or";
constexpr char kBitwiseXor[] = "bitwise_xor";

}  // namespace

void AddMoreElementwiseConverters(ConverterMap& map) {
  map["Sign"] = &ConvertOneInput<kSign>;
  map["Floor"] = &ConvertOneInput<kFloor>;
  map["Ceil"] = &ConvertOneInput<kCeil>;
  map["Round"] = &ConvertOneInput<kRound>;
  map["Not"] = &ConvertOneInput<kNot>;
  map["And"] = &ConvertTwoInputs<kAnd>;
  map["Or"] = &ConvertTwoInputs<kOr>;
  map["Xor"] = &ConvertTwoInputs<kXor>;
  map["BitwiseNot"] = &ConvertOneInput<kBitwiseNot>;
  map["BitwiseAnd"] = &ConvertTwoInputs<kBitwiseAnd>;
  map["BitwiseOr"] = &ConvertTwoInputs<kBitwiseOr>;
  map["BitwiseXor"] = &ConvertTwoInputs<kBitwiseXor>;
  map["BitShift"] = &ConvertBitShift;
  map["Mod"] = &ConvertMod;
  map["Mean"] = &ConvertMean;
  map["PRelu"] = &ConvertPRelu;
  map["Selu"] = &ConvertSelu;
}

}  // namespace onnx_import
}  // namespace scopeflow
