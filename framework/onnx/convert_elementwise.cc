// Converters of elementwise ONNX ops: arithmetic, comparisons, math
// functions, activations, softmax, Clip, Cast, Identity and Where.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/op_spec.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// One input "X", one output "Out": the unary math functions and the
// activations without attributes.
template <const char* kType>
absl::Status ConvertUnary(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder(kType).In("X", x).Out("Out", context.Output(0)));
}

// Inputs "X" and "Y", output "Out", numpy broadcasting on both sides (as
// ONNX's multidirectional broadcasting).
template <const char* kType>
absl::Status ConvertBinary(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string y, context.Input(1));
  return context.Emit(
      OpBuilder(kType).In("X", x).In("Y", y).Out("Out", context.Output(0)));
}

// Max, Min and Sum take any number of inputs: a chain of the binary op
// (one input is the identity).
template <const char* kType>
absl::Status ConvertVariadic(NodeContext& context) {
  SF_CHECK(context.InputCount() >= 1, "expected at least one input");
  SF_ASSIGN_OR_RETURN(std::string acc, context.Input(0));
  if (context.InputCount() == 1) {
    return context.Emit(
        OpBuilder("assign").In("X", acc).Out("Out", context.Output(0)));
  }
  for (int i = 1; i < context.InputCount(); ++i) {
    SF_ASSIGN_OR_RETURN(const std::string next, context.Input(i));
    const std::string out = i + 1 == context.InputCount()
                                ? context.Output(0)
                                : context.Temp(absl::StrFormat("partial%d", i));
    SF_RETURN_IF_ERROR(context.Emit(
        OpBuilder(kType).In("X", acc).In("Y", next).Out("Out", out)));
    acc = out;
  }
  return absl::OkStatus();
}

constexpr char kAdd[] = "add";
constexpr char kSub[] = "sub";
constexpr char kMul[] = "mul";
constexpr char kDiv[] = "div";
constexpr char kMax[] = "max";
constexpr char kMin[] = "min";
constexpr char kEqual[] = "equal";
constexpr char kLess[] = "less";
constexpr char kGreater[] = "greater";
constexpr char kLessEqual[] = "less_equal";
constexpr char kGreaterEqual[] = "greater_equal";
constexpr char kRelu[] = "relu";
constexpr char kSigmoid[] = "sigmoid";
constexpr char kTanh[] = "tanh";
constexpr char kExp[] = "exp";
constexpr char kLog[] = "log";
constexpr char kSqrt[] = "sqrt";
constexpr char kAbs[] = "abs";
constexpr char kNeg[] = "neg";
constexpr char kErf[] = "erf";
constexpr char kSin[] = "sin";
constexpr char kCos[] = "cos";
constexpr char kTan[] = "tan";
constexpr char kAsin[] = "asin";
constexpr char kAcos[] = "acos";
constexpr char kAtan[] = "atan";
constexpr char kSinh[] = "sinh";
constexpr char kCosh[] = "cosh";
constexpr char kAsinh[] = "asinh";
constexpr char kAcosh[] = "acosh";
constexpr char kAtanh[] = "atanh";
constexpr char kSoftsign[] = "softsign";
constexpr char kAssign[] = "assign";
constexpr char kSoftmax[] = "softmax";
constexpr char kLogSoftmax[] = "log_softmax";
constexpr char kReciprocal[] = "reciprocal";
constexpr char kSoftplus[] = "softplus";
constexpr char kHardSwish[] = "hard_swish";
constexpr char kMish[] = "mish";

// Emits a cast of `var` to `dtype` into a fresh temporary named after
// `hint`, and returns the temporary.
absl::StatusOr<std::string> CastTo(NodeContext& context, const std::string& var,
                                   DataType dtype, const char* hint) {
  const std::string cast = context.Temp(hint);
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("cast")
                       .In("X", var)
                       .Out("Out", cast)
                       .Attr("out_dtype", static_cast<int32_t>(dtype))));
  return cast;
}

// ONNX Pow lets the exponent have another type than the base; the result
// has the base's. scopeflow pow takes one dtype, so:
// - an integer base with a float exponent is computed in float64 and cast
//   back (truncating), as ONNX's reference computes numpy's power in the
//   promoted float type and casts it to the base's;
// - integers of two widths are computed in int64 (exact where the int32
//   result is, as int64 wraps around modulo 2^64) and cast back;
// - otherwise the exponent is cast to the base's dtype.
absl::Status ConvertPow(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(std::string y, context.Input(1));
  const DataType base = context.InputInfo(0).dtype;
  const DataType exponent = context.InputInfo(1).dtype;
  if (base == DATA_TYPE_UNSPECIFIED || exponent == DATA_TYPE_UNSPECIFIED ||
      base == exponent) {
    return context.Emit(
        OpBuilder("pow").In("X", x).In("Y", y).Out("Out", context.Output(0)));
  }
  if (!IsIntegerDataType(base)) {
    SF_ASSIGN_OR_RETURN(y, CastTo(context, y, base, "exponent"));
    return context.Emit(
        OpBuilder("pow").In("X", x).In("Y", y).Out("Out", context.Output(0)));
  }
  const DataType wide = IsIntegerDataType(exponent) ? kInt64 : kFloat64;
  if (base != wide) {
    SF_ASSIGN_OR_RETURN(x, CastTo(context, x, wide, "base"));
  }
  if (exponent != wide) {
    SF_ASSIGN_OR_RETURN(y, CastTo(context, y, wide, "exponent"));
  }
  const std::string power = context.Temp("power");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("pow").In("X", x).In("Y", y).Out("Out", power)));
  return context.Emit(OpBuilder("cast")
                          .In("X", power)
                          .Out("Out", context.Output(0))
                          .Attr("out_dtype", static_cast<int32_t>(base)));
}

absl::Status ConvertLeakyRelu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 0.01f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  // scopeflow's default alpha (0.02) is not ONNX's: always set it.
  return context.Emit(OpBuilder("leaky_relu")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("alpha", alpha));
}

absl::Status ConvertElu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 1.0f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("elu")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("alpha", alpha));
}

// ONNX's defaults (alpha 0.2, beta 0.5) are hard_sigmoid's; set anyway.
absl::Status ConvertHardSigmoid(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 0.2f));
  SF_ASSIGN_OR_RETURN(const float beta, context.FloatAttr("beta", 0.5f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("hard_sigmoid")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("alpha", alpha)
                          .Attr("beta", beta));
}

absl::Status ConvertGelu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string approximate,
                      context.StringAttr("approximate", "none"));
  SF_CHECK(approximate == "none" || approximate == "tanh",
           "attribute \"approximate\" is \"%s\": expected \"none\" or "
           "\"tanh\"",
           approximate);
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("gelu")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("approximate", approximate == "tanh"));
}

// Softmax and LogSoftmax. Since opset 13 they work along one axis (default
// -1), as scopeflow's do. Before, they flattened the input to 2-D at `axis`
// (default 1) and worked along the trailing block: that is the same along
// the last axis; otherwise it is flatten, the op along the last axis, and a
// reshape back, which needs the input's dims.
template <const char* kType>
absl::Status ConvertSoftmax(NodeContext& context) {
  const bool per_axis = context.opset() >= 13;
  SF_ASSIGN_OR_RETURN(const int64_t axis,
                      context.IntAttr("axis", per_axis ? -1 : 1));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  if (per_axis) {
    return context.Emit(OpBuilder(kType)
                            .In("X", x)
                            .Out("Out", context.Output(0))
                            .Attr("axis", axis));
  }
  const VarInfo info = context.InputInfo(0);
  if (!info.has_dims) {
    return Unsupported(absl::StrFormat(
        "at opset %d, %s flattens its input at the axis; the conversion needs "
        "the input's rank, which is unknown",
        context.opset(), context.op_type()));
  }
  const int64_t rank = static_cast<int64_t>(info.dims.size());
  SF_CHECK(axis >= -rank && axis < rank,
           "attribute \"axis\" = %d is out of range for rank %d", axis, rank);
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a == rank - 1) {
    return context.Emit(OpBuilder(kType)
                            .In("X", x)
                            .Out("Out", context.Output(0))
                            .Attr("axis", int64_t{-1}));
  }
  int unknown = 0;
  for (int64_t d : info.dims) unknown += d < 0;
  if (unknown > 1) {
    return Unsupported(absl::StrFormat(
        "at opset %d, %s with axis %d flattens its input %s and reshapes the "
        "result back, which needs at most one unknown dimension",
        context.opset(), context.op_type(), axis, DimsToString(info.dims)));
  }
  SF_ASSIGN_OR_RETURN(const int32_t flatten_axis, ToInt32(a, "axis"));
  const std::string flat = context.Temp("flat");
  const std::string result = context.Temp("flat_result");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("flatten")
                                      .In("X", x)
                                      .Out("Out", flat)
                                      .Attr("axis", flatten_axis)));
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder(kType)
                                      .In("X", flat)
                                      .Out("Out", result)
                                      .Attr("axis", int64_t{-1})));
  return context.Emit(
      OpBuilder("reshape")
          .In("X", result)
          .Out("Out", context.Output(0))
          .Attr("shape",
                std::vector<int64_t>(info.dims.begin(), info.dims.end())));
}

// Adds Clip bound `input` (1: min, 2: max) to `op`. Absent, it is
// unbounded (the attribute's default). A constant that float32 holds
// exactly folds into the float attribute `attr` (and into `*folded`); any
// other value, fed or computed, or a constant float32 would round, binds
// scopeflow's input `slot`, of X's dtype.
absl::Status AddClipBound(NodeContext& context, int input, const char* attr,
                          const char* slot, OpBuilder& op,
                          std::optional<float>* folded) {
  if (!context.HasInput(input)) return absl::OkStatus();
  if (context.IsConstant(input)) {
    SF_ASSIGN_OR_RETURN(const double value,
                        context.ConstantScalar(input, "it is a bound"));
    const float narrow = static_cast<float>(value);
    bool exact = static_cast<double>(narrow) == value || std::isnan(value);
    SF_ASSIGN_OR_RETURN(const Tensor* constant,
                        context.ConstantInput(input, "it is a bound"));
    if (constant->dtype() == kInt64) {
      // The double `value` itself may have rounded an int64.
      const double wide = narrow;
      exact = wide >= -0x1p63 && wide < 0x1p63 &&
              static_cast<int64_t>(wide) == *constant->data<int64_t>();
    }
    if (exact) {
      op.Attr(attr, narrow);
      *folded = narrow;
      return absl::OkStatus();
    }
  }
  SF_ASSIGN_OR_RETURN(const std::string name, context.Input(input));
  op.In(slot, name);
  return absl::OkStatus();
}

// Clip's bounds are inputs since opset 11, attributes before (each
// defaulting to float's lowest or highest finite value, not to infinity).
absl::Status ConvertClip(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("clip");
  op.In("X", x).Out("Out", context.Output(0));
  std::optional<float> min, max;
  if (context.opset() < 11) {
    SF_ASSIGN_OR_RETURN(
        min, context.FloatAttr("min", std::numeric_limits<float>::lowest()));
    SF_ASSIGN_OR_RETURN(
        max, context.FloatAttr("max", std::numeric_limits<float>::max()));
    op.Attr("min", *min).Attr("max", *max);
  } else {
    SF_RETURN_IF_ERROR(AddClipBound(context, 1, "min", "Min", op, &min));
    SF_RETURN_IF_ERROR(AddClipBound(context, 2, "max", "Max", op, &max));
  }
  if (min.has_value() && max.has_value() && *min > *max) {
    return Unsupported(absl::StrFormat(
        "min = %g exceeds max = %g: ONNX then gives max everywhere, but "
        "scopeflow clip requires min <= max",
        *min, *max));
  }
  return context.Emit(op);
}

// Cast's "round_mode" (25) as cast's "e8m0_rounding": how a value
// between two powers of two rounds into float8e8m0.
absl::StatusOr<std::string> RoundModeAttr(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("round_mode", "up"));
  if (mode != "up" && mode != "down" && mode != "nearest") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute \"round_mode\" is \"%s\": expected \"up\", \"down\" or "
        "\"nearest\"",
        mode));
  }
  return mode;
}

// "saturate" concerns float8 targets, "round_mode" the float8e8m0 one;
// cast has both.
absl::Status EmitCast(NodeContext& context, DataType dtype) {
  SF_ASSIGN_OR_RETURN(const int64_t saturate, context.IntAttr("saturate", 1));
  SF_ASSIGN_OR_RETURN(const std::string rounding, RoundModeAttr(context));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("cast")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("out_dtype", static_cast<int32_t>(dtype))
                          .Attr("saturate", saturate != 0)
                          .Attr("e8m0_rounding", rounding));
}

absl::Status ConvertCast(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t to, context.IntAttr("to"));
  SF_ASSIGN_OR_RETURN(const DataType dtype,
                      DataTypeFromOnnx(static_cast<int32_t>(to)));
  return EmitCast(context, dtype);
}

// CastLike (15; 19 and 25 add saturate and round_mode, as Cast's): Cast to
// input 1's dtype, whose values are unused.
absl::Status ConvertCastLike(NodeContext& context) {
  const DataType dtype = context.InputInfo(1).dtype;
  if (dtype == DATA_TYPE_UNSPECIFIED) {
    return Unsupported(absl::StrFormat(
        "input 1 (\"%s\"), whose dtype CastLike casts to, has no dtype "
        "scopeflow knows",
        context.InputName(1)));
  }
  return EmitCast(context, dtype);
}

// BitCast (26): X's bytes read as attribute "to", a type of X's element
// size.
absl::Status ConvertBitCast(NodeContext& context) {
  SF_CHECK(context.opset() >= 26,
           "ONNX BitCast exists from opset 26 on: the model imports opset %d",
           context.opset());
  SF_ASSIGN_OR_RETURN(const int64_t to, context.IntAttr("to"));
  SF_ASSIGN_OR_RETURN(const DataType dtype,
                      DataTypeFromOnnx(static_cast<int32_t>(to)));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("bit_cast")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("out_dtype", static_cast<int32_t>(dtype)));
}

absl::Status ConvertWhere(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string condition, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(1));
  SF_ASSIGN_OR_RETURN(const std::string y, context.Input(2));
  return context.Emit(OpBuilder("where")
                          .In("Condition", condition)
                          .In("X", x)
                          .In("Y", y)
                          .Out("Out", context.Output(0)));
}

}  // namespace

void AddElementwiseConverters(ConverterMap& map) {
  map["Add"] = &ConvertBinary<kAdd>;
  map["Sub"] = &ConvertBinary<kSub>;
  map["Mul"] = &ConvertBinary<kMul>;
  map["Div"] = &ConvertBinary<kDiv>;
  map["Pow"] = &ConvertPow;
  map["Max"] = &ConvertVariadic<kMax>;
  map["Min"] = &ConvertVariadic<kMin>;
  map["Sum"] = &ConvertVariadic<kAdd>;
  map["Equal"] = &ConvertBinary<kEqual>;
  map["Less"] = &ConvertBinary<kLess>;
  map["Greater"] = &ConvertBinary<kGreater>;
  map["LessOrEqual"] = &ConvertBinary<kLessEqual>;
  map["GreaterOrEqual"] = &ConvertBinary<kGreaterEqual>;
  map["Where"] = &ConvertWhere;
  map["Relu"] = &ConvertUnary<kRelu>;
  map["Sigmoid"] = &ConvertUnary<kSigmoid>;
  map["Tanh"] = &ConvertUnary<kTanh>;
  map["Exp"] = &ConvertUnary<kExp>;
  map["Log"] = &ConvertUnary<kLog>;
  map["Sqrt"] = &ConvertUnary<kSqrt>;
  map["Abs"] = &ConvertUnary<kAbs>;
  map["Neg"] = &ConvertUnary<kNeg>;
  map["Erf"] = &ConvertUnary<kErf>;
  map["Sin"] = &ConvertUnary<kSin>;
  map["Cos"] = &ConvertUnary<kCos>;
  map["Tan"] = &ConvertUnary<kTan>;
  map["Asin"] = &ConvertUnary<kAsin>;
  map["Acos"] = &ConvertUnary<kAcos>;
  map["Atan"] = &ConvertUnary<kAtan>;
  map["Sinh"] = &ConvertUnary<kSinh>;
  map["Cosh"] = &ConvertUnary<kCosh>;
  map["Asinh"] = &ConvertUnary<kAsinh>;
  map["Acosh"] = &ConvertUnary<kAcosh>;
  map["Atanh"] = &ConvertUnary<kAtanh>;
  map["Softsign"] = &ConvertUnary<kSoftsign>;
  map["Identity"] = &ConvertUnary<kAssign>;
  map["LeakyRelu"] = &ConvertLeakyRelu;
  map["Elu"] = &ConvertElu;
  map["Gelu"] = &ConvertGelu;
  map["Reciprocal"] = &ConvertUnary<kReciprocal>;
  map["Softplus"] = &ConvertUnary<kSoftplus>;
  map["HardSigmoid"] = &ConvertHardSigmoid;
  map["HardSwish"] = &ConvertUnary<kHardSwish>;
  map["Mish"] = &ConvertUnary<kMish>;
  map["Softmax"] = &ConvertSoftmax<kSoftmax>;
  map["LogSoftmax"] = &ConvertSoftmax<kLogSoftmax>;
  map["Clip"] = &ConvertClip;
  map["Cast"] = &ConvertCast;
  map["CastLike"] = &ConvertCastLike;
  map["BitCast"] = &ConvertBitCast;
}

}  // namespace onnx_import
}  // namespace scopeflow
