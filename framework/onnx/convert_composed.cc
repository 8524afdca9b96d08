// Converters of ONNX ops that are compositions of scopeflow ops, as ONNX
// itself defines most of them (function bodies): ThresholdedRelu and
// Shrink (comparisons and where), Swish (silu, or scale, sigmoid and mul),
// Celu (scale and elu), MeanVarianceNormalization (reduce_mean, mul, sub,
// sqrt, div), IsNaN and IsInf (equal; float16 and bfloat16 cast to float32 first), Hardmax (argmax then one_hot), LpNormalization
// (reduce_l1 / reduce_l2 then div), Compress (non_zero then gather) and
// EyeLike (a constant: its output depends on its input's dims alone). Each
// composed op has its own gradient where one exists, so the compositions
// do too.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/onnx_tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// A one-element float32 or float64 tensor holding `value`; Unimplemented
// for other dtypes.
absl::StatusOr<Tensor> FloatScalar(DataType dtype, double value,
                                   const NodeContext& context) {
  if (dtype != kFloat32 && dtype != kFloat64) {
    return Unsupported(absl::StrFormat(
        "%s is converted for float32 and float64 inputs, not %s",
        context.op_type(), DataTypeName(dtype)));
  }
  Tensor t;
  SF_RETURN_IF_ERROR(t.Allocate(CPUPlace(), dtype, Dims{}));
  if (dtype == kFloat64) {
    t.data<double>()[0] = value;
  } else {
    t.data<float>()[0] = static_cast<float>(value);
  }
  return t;
}

// A fresh variable holding `value` of input 0's dtype.
absl::StatusOr<std::string> ScalarLikeInput(NodeContext& context,
                                            absl::string_view hint,
                                            double value) {
  SF_ASSIGN_OR_RETURN(Tensor t,
                      FloatScalar(context.InputInfo(0).dtype, value, context));
  return context.AddConstant(hint, std::move(t));
}

// Emits `op` writing a fresh variable named after `hint`; returns it.
absl::StatusOr<std::string> EmitTo(NodeContext& context, OpBuilder op,
                                   absl::string_view hint) {
  const std::string out = context.Temp(hint);
  SF_RETURN_IF_ERROR(context.Emit(op.Out("Out", out)));
  return out;
}

absl::StatusOr<std::string> Compare(NodeContext& context, const char* type,
                                    const std::string& x, const std::string& y,
                                    absl::string_view hint) {
  return EmitTo(context, OpBuilder(type).In("X", x).In("Y", y), hint);
}

// ThresholdedRelu (10): x where x > alpha, else 0.
absl::Status ConvertThresholdedRelu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 1.0f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string threshold,
                      ScalarLikeInput(context, "alpha", alpha));
  SF_ASSIGN_OR_RETURN(const std::string zero,
                      ScalarLikeInput(context, "zero", 0));
  SF_ASSIGN_OR_RETURN(const std::string above,
                      Compare(context, "greater", x, threshold, "above"));
  return context.Emit(OpBuilder("where")
                          .In("Condition", above)
                          .In("X", x)
                          .In("Y", zero)
                          .Out("Out", context.Output(0)));
}

// Shrink (9): x + bias where x < -lambd, x - bias where x > lambd, else 0.
absl::Status ConvertShrink(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float bias, context.FloatAttr("bias", 0.0f));
  SF_ASSIGN_OR_RETURN(const float lambd, context.FloatAttr("lambd", 0.5f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string low,
                      ScalarLikeInput(context, "minus_lambd", -lambd));
  SF_ASSIGN_OR_RETURN(const std::string high,
                      ScalarLikeInput(context, "lambd", lambd));
  SF_ASSIGN_OR_RETURN(const std::string zero,
                      ScalarLikeInput(context, "zero", 0));
  SF_ASSIGN_OR_RETURN(const std::string below,
                      Compare(context, "less", x, low, "below"));
  SF_ASSIGN_OR_RETURN(const std::string above,
                      Compare(context, "greater", x, high, "above"));
  SF_ASSIGN_OR_RETURN(
      const std::string raised,
      EmitTo(context, OpBuilder("scale").In("X", x).Attr("bias", bias),
             "raised"));
  SF_ASSIGN_OR_RETURN(
      const std::string lowered,
      EmitTo(context, OpBuilder("scale").In("X", x).Attr("bias", -bias),
             "lowered"));
  SF_ASSIGN_OR_RETURN(const std::string upper,
                      EmitTo(context,
                             OpBuilder("where")
                                 .In("Condition", above)
                                 .In("X", lowered)
                                 .In("Y", zero),
                             "upper"));
  return context.Emit(OpBuilder("where")
                          .In("Condition", below)
                          .In("X", raised)
                          .In("Y", upper)
                          .Out("Out", context.Output(0)));
}

// Swish (24): x * sigmoid(alpha * x); scopeflow's silu where alpha is 1.
absl::Status ConvertSwish(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 1.0f));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  if (alpha == 1.0f) {
    return context.Emit(
        OpBuilder("silu").In("X", x).Out("Out", context.Output(0)));
  }
  SF_ASSIGN_OR_RETURN(
      const std::string scaled,
      EmitTo(context, OpBuilder("scale").In("X", x).Attr("scale", alpha),
             "scaled"));
  SF_ASSIGN_OR_RETURN(
      const std::string gate,
      EmitTo(context, OpBuilder("sigmoid").In("X", scaled), "gate"));
  return context.Emit(
      OpBuilder("mul").In("X", x).In("Y", gate).Out("Out", context.Output(0)));
}

// Input 0, cast to float32 when it is float16 or bfloat16: the comparison
// kernels take float32 and float64, and the widening is exact (NaN and the
// infinities included). Sets `dtype` to the returned variable's.
absl::StatusOr<std::string> WidenedFloatInput(NodeContext& context,
                                              DataType& dtype) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  dtype = context.InputInfo(0).dtype;
  if (dtype != kFloat16 && dtype != kBFloat16) return x;
  dtype = kFloat32;
  return EmitTo(context,
                OpBuilder("cast").In("X", x).Attr(
                    "out_dtype", static_cast<int32_t>(kFloat32)),
                "widened");
}

// IsNaN (9, 13, 20): x != x.
absl::Status ConvertIsNaN(NodeContext& context) {
  DataType dtype;
  SF_ASSIGN_OR_RETURN(const std::string x, WidenedFloatInput(context, dtype));
  SF_ASSIGN_OR_RETURN(const std::string same,
                      Compare(context, "equal", x, x, "is_number"));
  return context.Emit(
      OpBuilder("logical_not").In("X", same).Out("Out", context.Output(0)));
}

// IsInf (10, 20): x == +inf (detect_positive), x == -inf
// (detect_negative), or both.
absl::Status ConvertIsInf(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t positive,
                      context.IntAttr("detect_positive", 1));
  SF_ASSIGN_OR_RETURN(const int64_t negative,
                      context.IntAttr("detect_negative", 1));
  DataType dtype;
  SF_ASSIGN_OR_RETURN(const std::string x, WidenedFloatInput(context, dtype));
  auto scalar = [&](absl::string_view hint,
                    double value) -> absl::StatusOr<std::string> {
    SF_ASSIGN_OR_RETURN(Tensor t, FloatScalar(dtype, value, context));
    return context.AddConstant(hint, std::move(t));
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::string> hits;
  for (const auto& [wanted, value, hint] :
       {std::tuple<bool, double, const char*>{positive != 0, inf, "plus_inf"},
        {negative != 0, -inf, "minus_inf"}}) {
    if (!wanted) continue;
    SF_ASSIGN_OR_RETURN(const std::string bound, scalar(hint, value));
    SF_ASSIGN_OR_RETURN(const std::string hit,
                        Compare(context, "equal", x, bound, "is_inf"));
    hits.push_back(hit);
  }
  if (hits.empty()) {
    // Nothing is detected: equal to NaN is false everywhere.
    SF_ASSIGN_OR_RETURN(
        const std::string nan,
        scalar("nan", std::numeric_limits<double>::quiet_NaN()));
    return context.Emit(OpBuilder("equal").In("X", x).In("Y", nan).Out(
        "Out", context.Output(0)));
  }
  if (hits.size() == 1) {
    return context.Emit(
        OpBuilder("assign").In("X", hits[0]).Out("Out", context.Output(0)));
  }
  return context.Emit(OpBuilder("logical_or")
                          .In("X", hits[0])
                          .In("Y", hits[1])
                          .Out("Out", context.Output(0)));
}

// Celu (12): alpha * elu(x / alpha) with elu's alpha 1, ONNX's function
// body.
absl::Status ConvertCelu(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 1.0f));
  SF_CHECK(alpha != 0.0f, "alpha = 0: Celu divides by alpha");
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(
      const std::string scaled,
      EmitTo(context, OpBuilder("scale").In("X", x).Attr("scale", 1.0f / alpha),
             "scaled"));
  SF_ASSIGN_OR_RETURN(
      const std::string elu,
      EmitTo(context, OpBuilder("elu").In("X", scaled).Attr("alpha", 1.0f),
             "elu"));
  return context.Emit(OpBuilder("scale")
                          .In("X", elu)
                          .Out("Out", context.Output(0))
                          .Attr("scale", alpha));
}

// MeanVarianceNormalization (9, 13): (x - E[x]) / (sqrt(E[x^2] - E[x]^2) +
// 1e-9), the means over `axes` (default [0, 2, 3]), as ONNX's function
// body computes it.
absl::Status ConvertMeanVarianceNormalization(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                      context.IntsAttr("axes", std::vector<int64_t>{0, 2, 3}));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  auto mean_of = [&](const std::string& v, absl::string_view hint) {
    return EmitTo(context,
                  OpBuilder("reduce_mean")
                      .In("X", v)
                      .Attr("axes", axes)
                      .Attr("keep_dim", true),
                  hint);
  };
  auto binary = [&](const char* type, const std::string& a,
                    const std::string& b, absl::string_view hint) {
    return EmitTo(context, OpBuilder(type).In("X", a).In("Y", b), hint);
  };
  SF_ASSIGN_OR_RETURN(const std::string mean, mean_of(x, "mean"));
  SF_ASSIGN_OR_RETURN(const std::string squares,
                      binary("mul", x, x, "squares"));
  SF_ASSIGN_OR_RETURN(const std::string mean_square,
                      mean_of(squares, "mean_square"));
  SF_ASSIGN_OR_RETURN(const std::string square_mean,
                      binary("mul", mean, mean, "square_mean"));
  SF_ASSIGN_OR_RETURN(const std::string variance,
                      binary("sub", mean_square, square_mean, "variance"));
  SF_ASSIGN_OR_RETURN(
      const std::string deviation,
      EmitTo(context, OpBuilder("sqrt").In("X", variance), "deviation"));
  SF_ASSIGN_OR_RETURN(
      const std::string divisor,
      EmitTo(context, OpBuilder("scale").In("X", deviation).Attr("bias", 1e-9f),
             "divisor"));
  SF_ASSIGN_OR_RETURN(const std::string centred,
                      binary("sub", x, mean, "centred"));
  return context.Emit(OpBuilder("div")
                          .In("X", centred)
                          .In("Y", divisor)
                          .Out("Out", context.Output(0)));
}

// Hardmax (13; before 13 the input was coerced to 2-D at the axis, which is
// the same where the axis is the last): one_hot of the argmax (the first
// on ties) along the axis.
absl::Status ConvertHardmax(NodeContext& context) {
  const bool per_axis = context.opset() >= 13;
  SF_ASSIGN_OR_RETURN(const int64_t axis,
                      context.IntAttr("axis", per_axis ? -1 : 1));
  const VarInfo info = context.InputInfo(0);
  if (!info.has_dims || info.dims.empty()) {
    return Unsupported("the conversion needs the input's rank and dims");
  }
  const int64_t rank = static_cast<int64_t>(info.dims.size());
  SF_CHECK(axis >= -rank && axis < rank,
           "attribute \"axis\" = %d is out of range for rank %d", axis, rank);
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (!per_axis && a != rank - 1) {
    return Unsupported(absl::StrFormat(
        "at opset %d, Hardmax flattens its input to 2-D at axis %d; only "
        "the last axis is converted",
        context.opset(), axis));
  }
  const int64_t depth = info.dims[a];
  if (depth < 0) return Unsupported("the conversion needs the axis's size");
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(
      const std::string index,
      EmitTo(context,
             OpBuilder("argmax").In("X", x).Attr("axis", a).Attr("keepdims",
                                                                 false),
             "argmax"));
  Tensor depth_value;
  SF_RETURN_IF_ERROR(depth_value.Allocate(CPUPlace(), kInt64, Dims{}));
  depth_value.data<int64_t>()[0] = depth;
  const std::string depth_var =
      context.AddConstant("depth", std::move(depth_value));
  Tensor off_on;
  SF_RETURN_IF_ERROR(off_on.Allocate(CPUPlace(), info.dtype, Dims{2}));
  if (info.dtype == kFloat64) {
    off_on.data<double>()[0] = 0;
    off_on.data<double>()[1] = 1;
  } else if (info.dtype == kFloat32) {
    off_on.data<float>()[0] = 0;
    off_on.data<float>()[1] = 1;
  } else {
    return Unsupported(absl::StrFormat(
        "Hardmax is converted for float32 and float64 inputs, not %s",
        DataTypeName(info.dtype)));
  }
  const std::string values = context.AddConstant("off_on", std::move(off_on));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(a, "axis"));
  return context.Emit(OpBuilder("one_hot")
                          .In("Indices", index)
                          .In("Depth", depth_var)
                          .In("Values", values)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis32));
}

// LpNormalization (1, 22): x divided by its L1 or L2 norm along the axis
// (by 1 where the norm is 0).
absl::Status ConvertLpNormalization(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", -1));
  SF_ASSIGN_OR_RETURN(const int64_t p, context.IntAttr("p", 2));
  SF_CHECK(p == 1 || p == 2, "attribute \"p\" = %d: expected 1 or 2", p);
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string norm,
                      EmitTo(context,
                             OpBuilder(p == 1 ? "reduce_l1" : "reduce_l2")
                                 .In("X", x)
                                 .Attr("axes", std::vector<int64_t>{axis})
                                 .Attr("keep_dim", true),
                             "norm"));
  // A zero norm divides by 1, leaving the zeros (ONNX's reference).
  SF_ASSIGN_OR_RETURN(const std::string zero,
                      ScalarLikeInput(context, "zero", 0));
  SF_ASSIGN_OR_RETURN(const std::string one,
                      ScalarLikeInput(context, "one", 1));
  SF_ASSIGN_OR_RETURN(const std::string is_zero,
                      Compare(context, "equal", norm, zero, "norm_is_zero"));
  SF_ASSIGN_OR_RETURN(const std::string divisor,
                      EmitTo(context,
                             OpBuilder("where")
                                 .In("Condition", is_zero)
                                 .In("X", one)
                                 .In("Y", norm),
                             "divisor"));
  return context.Emit(OpBuilder("div")
                          .In("X", x)
                          .In("Y", divisor)
                          .Out("Out", context.Output(0)));
}

// Compress (9, 11): the slices of x along the axis (of x flattened without
// one) where the condition holds.
absl::Status ConvertCompress(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string condition, context.Input(1));
  int64_t axis = 0;
  if (context.HasAttr("axis")) {
    SF_ASSIGN_OR_RETURN(axis, context.IntAttr("axis"));
  } else {
    SF_ASSIGN_OR_RETURN(x, EmitTo(context,
                                  OpBuilder("reshape").In("X", x).Attr(
                                      "shape", std::vector<int64_t>{-1}),
                                  "flat"));
  }
  SF_ASSIGN_OR_RETURN(
      const std::string where,
      EmitTo(context, OpBuilder("non_zero").In("X", condition), "kept"));
  SF_ASSIGN_OR_RETURN(const std::string index,
                      EmitTo(context,
                             OpBuilder("reshape")
                                 .In("X", where)
                                 .Attr("shape", std::vector<int64_t>{-1}),
                             "kept_index"));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  return context.Emit(OpBuilder("gather")
                          .In("X", x)
                          .In("Index", index)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis32));
}

template <typename T>
void FillEye(Tensor& t, int64_t rows, int64_t cols, int64_t k) {
  T* data = t.data<T>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      data[i * cols + j] = static_cast<T>(j - i == k ? 1 : 0);
    }
  }
}

// EyeLike (9, 22): ones on the k-th diagonal of a matrix of the input's
// shape, of attribute dtype or else the input's.
absl::Status ConvertEyeLike(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t k, context.IntAttr("k", 0));
  const VarInfo info = context.InputInfo(0);
  DataType dtype = info.dtype;
  if (context.HasAttr("dtype")) {
    SF_ASSIGN_OR_RETURN(const int64_t onnx_dtype, context.IntAttr("dtype"));
    SF_ASSIGN_OR_RETURN(dtype,
                        DataTypeFromOnnx(static_cast<int32_t>(onnx_dtype)));
  }
  if (!info.has_dims || info.dims.size() != 2 || info.dims[0] < 0 ||
      info.dims[1] < 0) {
    return Unsupported(
        "EyeLike is converted to a constant, which needs the input's dims "
        "(2-D) at import");
  }
  Tensor eye;
  SF_RETURN_IF_ERROR(eye.Allocate(CPUPlace(), dtype, info.dims));
  const int64_t rows = info.dims[0];
  const int64_t cols = info.dims[1];
  switch (dtype) {
    case kFloat32:
      FillEye<float>(eye, rows, cols, k);
      break;
    case kFloat64:
      FillEye<double>(eye, rows, cols, k);
      break;
    case kInt32:
      FillEye<int32_t>(eye, rows, cols, k);
      break;
    case kInt64:
      FillEye<int64_t>(eye, rows, cols, k);
      break;
    case kInt8:
      FillEye<int8_t>(eye, rows, cols, k);
      break;
    case kUInt8:
      FillEye<uint8_t>(eye, rows, cols, k);
      break;
    case kBool:
      FillEye<bool>(eye, rows, cols, k);
      break;
    default:
      return Unsupported(absl::StrFormat("EyeLike of dtype %s is not converted",
                                         DataTypeName(dtype)));
  }
  context.SetConstantOutput(0, std::move(eye));
  return absl::OkStatus();
}

}  // namespace

void AddComposedConverters(ConverterMap& map) {
  map["ThresholdedRelu"] = &ConvertThresholdedRelu;
  map["Shrink"] = &ConvertShrink;
  map["Swish"] = &ConvertSwish;
  map["IsNaN"] = &ConvertIsNaN;
  map["IsInf"] = &ConvertIsInf;
  map["Hardmax"] = &ConvertHardmax;
  map["Celu"] = &ConvertCelu;
  map["MeanVarianceNormalization"] = &ConvertMeanVarianceNormalization;
  map["LpNormalization"] = &ConvertLpNormalization;
  map["Compress"] = &ConvertCompress;
  map["EyeLike"] = &ConvertEyeLike;
}

}  // namespace onnx_import
}  // namespace scopeflow
