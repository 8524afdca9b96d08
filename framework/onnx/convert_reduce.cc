// Converters of ONNX reductions: ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSumExp,
// ReduceSumSquare, ReduceLogSum, ArgMax and ArgMin.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// ReduceSumSquare and ReduceLogSum are reduce_sum around a square of the
// input and a log of the result, as ONNX defines them.
enum class Around { kNothing, kSquareFirst, kLogAfter };

// The axes became an input at opset 13 for ReduceSum and at opset 18 for
// the other reductions; noop_with_empty_axes came with them. Constant axes
// fold into the attribute; others bind scopeflow's input "Axes", whose
// emptiness is known only at run time, so noop_with_empty_axes goes along.
template <const char* kType, int kAxesInputSince,
          Around kAround = Around::kNothing>
absl::Status ConvertReduce(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t keepdims, context.IntAttr("keepdims", 1));
  std::vector<int64_t> axes;
  int64_t noop_with_empty_axes = 0;
  SF_ASSIGN_OR_RETURN(std::string x, context.Input(0));
  if (kAround == Around::kSquareFirst) {
    const std::string squares = context.Temp("squares");
    SF_RETURN_IF_ERROR(context.Emit(
        OpBuilder("mul").In("X", x).In("Y", x).Out("Out", squares)));
    x = squares;
  }
  const std::string out =
      kAround == Around::kLogAfter ? context.Temp("sum") : context.Output(0);
  OpBuilder reduce(kType);
  reduce.In("X", x).Out("Out", out).Attr("keep_dim", keepdims != 0);
  bool identity = false;
  if (context.opset() >= kAxesInputSince) {
    SF_ASSIGN_OR_RETURN(noop_with_empty_axes,
                        context.IntAttr("noop_with_empty_axes", 0));
    if (context.HasInput(1) && !context.IsConstant(1)) {
      SF_ASSIGN_OR_RETURN(const std::string axes_input, context.Input(1));
      reduce.In("Axes", axes_input)
          .Attr("noop_with_empty_axes", noop_with_empty_axes != 0);
    } else {
      if (context.HasInput(1)) {
        SF_ASSIGN_OR_RETURN(axes, context.ConstantInts(1, "it gives the axes"));
      }
      // No axes reduce nothing: the identity.
      identity = axes.empty() && noop_with_empty_axes != 0;
      reduce.Attr("axes", axes);
    }
  } else {
    SF_ASSIGN_OR_RETURN(axes, context.IntsAttr("axes", std::vector<int64_t>{}));
    // Empty axes reduce every axis, in ONNX as in scopeflow.
    reduce.Attr("axes", axes);
  }
  SF_RETURN_IF_ERROR(context.Emit(
      identity ? OpBuilder("assign").In("X", x).Out("Out", out) : reduce));
  if (kAround != Around::kLogAfter) return absl::OkStatus();
  return context.Emit(
      OpBuilder("log").In("X", out).Out("Out", context.Output(0)));
}

constexpr char kReduceSum[] = "reduce_sum";
constexpr char kReduceMean[] = "reduce_mean";
constexpr char kReduceMax[] = "reduce_max";
constexpr char kReduceMin[] = "reduce_min";
constexpr char kReduceProd[] = "reduce_prod";
constexpr char kReduceL1[] = "reduce_l1";
constexpr char kReduceL2[] = "reduce_l2";
constexpr char kReduceLogSumExp[] = "reduce_log_sum_exp";
constexpr char kArgMax[] = "argmax";
constexpr char kArgMin[] = "argmin";

template <const char* kType>
absl::Status ConvertArgMax(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 0));
  SF_ASSIGN_OR_RETURN(const int64_t keepdims, context.IntAttr("keepdims", 1));
  SF_ASSIGN_OR_RETURN(const int64_t select_last_index,
                      context.IntAttr("select_last_index", 0));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder(kType)
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis)
                          .Attr("keepdims", keepdims != 0)
                          .Attr("select_last_index", select_last_index != 0));
}

}  // namespace

void AddReduceConverters(ConverterMap& map) {
  map["ReduceSum"] = &ConvertReduce<kReduceSum, 13>;
  map["ReduceMean"] = &ConvertReduce<kReduceMean, 18>;
  map["ReduceMax"] = &ConvertReduce<kReduceMax, 18>;
  map["ReduceMin"] = &ConvertReduce<kReduceMin, 18>;
  map["ReduceProd"] = &ConvertReduce<kReduceProd, 18>;
  map["ReduceL1"] = &ConvertReduce<kReduceL1, 18>;
  map["ReduceL2"] = &ConvertReduce<kReduceL2, 18>;
  map["ReduceLogSumExp"] = &ConvertReduce<kReduceLogSumExp, 18>;
  map["ReduceSumSquare"] = &ConvertReduce<kReduceSum, 18, Around::kSquareFirst>;
  map["ReduceLogSum"] = &ConvertReduce<kReduceSum, 18, Around::kLogAfter>;
  map["ArgMax"] = &ConvertArgMax<kArgMax>;
  map["ArgMin"] = &ConvertArgMax<kArgMin>;
}

}  // namespace onnx_import
}  // namespace scopeflow
