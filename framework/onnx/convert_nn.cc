// Converters of the ONNX ops of neural-network layers: MatMul, Gemm,
// Conv, pooling (MaxPool, AveragePool, LpPool, global), LRN,
// BatchNormalization, LayerNormalization and Dropout.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// scopeflow's conv2d works on rank-4 NCHW tensors: 2-D windows.
absl::Status CheckTwoSpatialAxes(const NodeContext& context,
                                 const VarInfo& input, const char* op) {
  if (!input.has_dims) {
    return Unsupported(absl::StrFormat(
        "scopeflow %s handles 2-D windows (rank-4 NCHW input) only, and the "
        "input's rank is unknown",
        op));
  }
  const int rank = static_cast<int>(input.dims.size());
  if (rank != 4) {
    return Unsupported(absl::StrFormat(
        "%d-D %s (input of rank %d): scopeflow %s handles 2-D windows "
        "(rank-4 NCHW input) only",
        rank - 2, context.op_type(), rank, op));
  }
  return absl::OkStatus();
}

// A list attribute of two values, one per spatial axis.
absl::StatusOr<std::array<int64_t, 2>> PairAttr(NodeContext& context,
                                                const char* name,
                                                std::optional<int64_t> fill) {
  std::optional<std::vector<int64_t>> default_value;
  if (fill.has_value()) default_value = std::vector<int64_t>(2, *fill);
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> values,
                      context.IntsAttr(name, default_value));
  SF_CHECK(values.size() == 2,
           "attribute \"%s\" = %s: expected 2 values for 2-D windows", name,
           IntsToString(values));
  return std::array<int64_t, 2>{values[0], values[1]};
}

std::vector<int64_t> AsVector(const std::array<int64_t, 2>& pair) {
  return {pair[0], pair[1]};
}

// MatMul has numpy's matmul semantics: a 1-D operand is a row (A) or a
// column (B) vector whose dimension the result drops. scopeflow matmul
// takes rank >= 2, so 1-D operands are unsqueezed and the result squeezed.
absl::Status ConvertMatMul(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string a, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string b, context.Input(1));
  const VarInfo a_info = context.InputInfo(0);
  const VarInfo b_info = context.InputInfo(1);
  if (!a_info.has_dims || !b_info.has_dims) {
    return Unsupported(
        "the rank of A or B is unknown: scopeflow matmul takes rank >= 2, so "
        "a 1-D operand must be known to be unsqueezed");
  }
  const int a_rank = static_cast<int>(a_info.dims.size());
  const int b_rank = static_cast<int>(b_info.dims.size());
  SF_CHECK(a_rank >= 1 && b_rank >= 1,
           "MatMul of a scalar: A has rank %d, B rank %d", a_rank, b_rank);
  std::string x = a;
  if (a_rank == 1) {
    x = context.Temp("a_row");
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("unsqueeze")
                         .In("X", a)
                         .Out("Out", x)
                         .Attr("axes", std::vector<int32_t>{0})));
  }
  std::string y = b;
  if (b_rank == 1) {
    y = context.Temp("b_column");
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("unsqueeze")
                         .In("X", b)
                         .Out("Out", y)
                         .Attr("axes", std::vector<int32_t>{1})));
  }
  if (a_rank > 1 && b_rank > 1) {
    return context.Emit(OpBuilder("matmul").In("X", x).In("Y", y).Out(
        "Out", context.Output(0)));
  }
  const std::string product = context.Temp("product");
  SF_RETURN_IF_ERROR(context.Emit(
      OpBuilder("matmul").In("X", x).In("Y", y).Out("Out", product)));
  std::vector<int32_t> drop;
  if (a_rank == 1) drop.push_back(-2);
  if (b_rank == 1) drop.push_back(-1);
  return context.Emit(OpBuilder("squeeze")
                          .In("X", product)
                          .Out("Out", context.Output(0))
                          .Attr("axes", drop));
}

// Y = alpha * A' B' + beta * C: matmul (with its transpose flags and
// alpha), then C, scaled by beta unless it is 1, added with broadcasting.
absl::Status ConvertGemm(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 1.0f));
  SF_ASSIGN_OR_RETURN(const float beta, context.FloatAttr("beta", 1.0f));
  SF_ASSIGN_OR_RETURN(const int64_t trans_a, context.IntAttr("transA", 0));
  SF_ASSIGN_OR_RETURN(const int64_t trans_b, context.IntAttr("transB", 0));
  SF_ASSIGN_OR_RETURN(const std::string a, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string b, context.Input(1));
  const bool has_c = context.HasInput(2);
  const std::string product =
      has_c ? context.Temp("product") : context.Output(0);
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("matmul")
                                      .In("X", a)
                                      .In("Y", b)
                                      .Out("Out", product)
                                      .Attr("transpose_x", trans_a != 0)
                                      .Attr("transpose_y", trans_b != 0)
                                      .Attr("alpha", alpha)));
  if (!has_c) return absl::OkStatus();
  SF_ASSIGN_OR_RETURN(std::string c, context.Input(2));
  if (beta != 1.0f) {
    const std::string scaled = context.Temp("scaled_c");
    SF_RETURN_IF_ERROR(context.Emit(
        OpBuilder("scale").In("X", c).Out("Out", scaled).Attr("scale", beta)));
    c = scaled;
  }
  return context.Emit(OpBuilder("add")
                          .In("X", product)
                          .In("Y", c)
                          .Out("Out", context.Output(0)));
}

// A 1-D Conv (input [N, C, L], filter [M, C / group, K]) is conv2d over
// [N, C, 1, L] with a [M, C / group, 1, K] filter, between unsqueezes and
// a squeeze of the height axis.
absl::Status ConvertConv1d(NodeContext& context, const std::string& x,
                           const std::string& w) {
  const VarInfo x_info = context.InputInfo(0);
  const VarInfo w_info = context.InputInfo(1);
  std::vector<int64_t> kernel = {-1};
  if (w_info.has_dims && w_info.dims.size() == 3) kernel = {w_info.dims[2]};
  if (context.HasAttr("kernel_shape")) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> given,
                        context.IntsAttr("kernel_shape"));
    SF_CHECK(given.size() == 1 && (kernel[0] < 0 || kernel[0] == given[0]),
             "attribute \"kernel_shape\" = %s contradicts the filter's "
             "shape %s",
             IntsToString(given), DimsToString(w_info.dims));
    kernel = given;
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                      context.IntsAttr("strides", std::vector<int64_t>{1}));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations,
                      context.IntsAttr("dilations", std::vector<int64_t>{1}));
  SF_CHECK(strides.size() == 1 && dilations.size() == 1,
           "attributes \"strides\" = %s and \"dilations\" = %s: expected one "
           "value each for a 1-D Conv",
           IntsToString(strides), IntsToString(dilations));
  SF_ASSIGN_OR_RETURN(
      const std::vector<int32_t> pads,
      SpatialPaddings(context, x_info, kernel, strides, dilations));
  SF_ASSIGN_OR_RETURN(const int64_t group, context.IntAttr("group", 1));
  SF_ASSIGN_OR_RETURN(const int32_t groups, ToInt32(group, "group"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> strides32,
                      ToInt32s({1, strides[0]}, "strides"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> dilations32,
                      ToInt32s({1, dilations[0]}, "dilations"));
  const std::string input = context.Temp("input_2d");
  const std::string filter = context.Temp("filter_2d");
  const std::string output = context.Temp("output_2d");
  for (const auto& [from, to] : {std::pair(x, input), std::pair(w, filter)}) {
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("unsqueeze")
                         .In("X", from)
                         .Out("Out", to)
                         .Attr("axes", std::vector<int32_t>{2})));
  }
  OpBuilder op("conv2d");
  op.In("Input", input).In("Filter", filter);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string bias, context.Input(2));
    op.In("Bias", bias);
  }
  op.Out("Output", output)
      .Attr("strides", strides32)
      .Attr("paddings", std::vector<int32_t>{0, 0, pads[0], pads[1]})
      .Attr("dilations", dilations32)
      .Attr("groups", groups);
  SF_RETURN_IF_ERROR(context.Emit(op));
  return context.Emit(OpBuilder("squeeze")
                          .In("X", output)
                          .Out("Out", context.Output(0))
                          .Attr("axes", std::vector<int32_t>{2}));
}

absl::Status ConvertConv(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string w, context.Input(1));
  const VarInfo x_info = context.InputInfo(0);
  if (x_info.has_dims && x_info.dims.size() == 3) {
    return ConvertConv1d(context, x, w);
  }
  const VarInfo w_info = context.InputInfo(1);
  SF_RETURN_IF_ERROR(CheckTwoSpatialAxes(context, x_info, "conv2d"));
  SF_ASSIGN_OR_RETURN(const auto strides, PairAttr(context, "strides", 1));
  SF_ASSIGN_OR_RETURN(const auto dilations, PairAttr(context, "dilations", 1));
  SF_ASSIGN_OR_RETURN(const int64_t group, context.IntAttr("group", 1));
  // The kernel's size is the filter's; kernel_shape, if given, repeats it.
  std::array<int64_t, 2> kernel = {-1, -1};
  if (w_info.has_dims && w_info.dims.size() == 4) {
    kernel = {w_info.dims[2], w_info.dims[3]};
  }
  if (context.HasAttr("kernel_shape")) {
    SF_ASSIGN_OR_RETURN(const auto given,
                        PairAttr(context, "kernel_shape", std::nullopt));
    for (int i = 0; i < 2; ++i) {
      SF_CHECK(kernel[i] < 0 || kernel[i] == given[i],
               "attribute \"kernel_shape\" = %s contradicts the filter's "
               "shape %s",
               IntsToString(AsVector(given)), DimsToString(w_info.dims));
      kernel[i] = given[i];
    }
  }
  SF_ASSIGN_OR_RETURN(
      const std::vector<int32_t> paddings,
      WindowPaddings(context, x_info, kernel, strides, dilations));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> strides32,
                      ToInt32s(AsVector(strides), "strides"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> dilations32,
                      ToInt32s(AsVector(dilations), "dilations"));
  SF_ASSIGN_OR_RETURN(const int32_t groups, ToInt32(group, "group"));
  OpBuilder op("conv2d");
  op.In("Input", x).In("Filter", w);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string bias, context.Input(2));
    op.In("Bias", bias);
  }
  op.Out("Output", context.Output(0))
      .Attr("strides", strides32)
      .Attr("paddings", paddings)
      .Attr("dilations", dilations32)
      .Attr("groups", groups);
  return context.Emit(op);
}

// The number of spatial axes of a pooling node's input [N, C, spatial...]:
// scopeflow pools over 1, 2 or 3 (pool1d, pool2d, pool3d).
absl::StatusOr<int> PoolSpatialAxes(const NodeContext& context,
                                    const VarInfo& input) {
  if (!input.has_dims) {
    return Unsupported(absl::StrFormat(
        "%s of an input of unknown rank: scopeflow picks pool1d, pool2d or "
        "pool3d by the rank",
        context.op_type()));
  }
  const int rank = static_cast<int>(input.dims.size());
  if (rank < 3 || rank > 5) {
    return Unsupported(absl::StrFormat(
        "%s of an input of rank %d: scopeflow pools over 1 to 3 spatial axes "
        "(input rank 3 to 5)",
        context.op_type(), rank));
  }
  return rank - 2;
}

// A list attribute of one value per spatial axis (`fill` each if absent).
absl::StatusOr<std::vector<int64_t>> PerAxisAttr(NodeContext& context,
                                                 const char* name, int axes,
                                                 std::optional<int64_t> fill) {
  std::optional<std::vector<int64_t>> default_value;
  if (fill.has_value()) default_value = std::vector<int64_t>(axes, *fill);
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                      context.IntsAttr(name, default_value));
  SF_CHECK(static_cast<int>(values.size()) == axes,
           "attribute \"%s\" = %s: expected one value per spatial axis of "
           "the input (%d)",
           name, IntsToString(values), axes);
  return values;
}

constexpr const char* kPoolOps[] = {"pool1d", "pool2d", "pool3d"};

enum class PoolKind { kMax, kAverage, kLp };

// out = X^exponent, elementwise.
absl::Status EmitPower(NodeContext& context, const std::string& x,
                       double exponent, const std::string& out) {
  const DataType dtype = context.Info(x).dtype;
  if (dtype != kFloat32 && dtype != kFloat64) {
    return Unsupported(absl::StrFormat("%s of %s is not converted",
                                       context.op_type(), DataTypeName(dtype)));
  }
  Tensor value;
  SF_RETURN_IF_ERROR(value.Allocate(CPUPlace(), dtype, Dims{}));
  if (dtype == kFloat64) {
    value.data<double>()[0] = exponent;
  } else {
    value.data<float>()[0] = static_cast<float>(exponent);
  }
  const std::string y = context.AddConstant("exponent", std::move(value));
  return context.Emit(OpBuilder("pow").In("X", x).In("Y", y).Out("Out", out));
}

// MaxPool, AveragePool and LpPool, over 1 to 3 spatial axes. MaxPool's
// Indices output is pool's: flat offsets into X, the spatial axes ordered as
// storage_order says. LpPool, (sum of |X|^p over the window)^(1/p), is the
// average of |X|^p counting padding (which adds nothing to the sum) times
// the window's size, to the power 1/p.
absl::Status ConvertPool(NodeContext& context, PoolKind kind) {
  const bool is_max = kind == PoolKind::kMax;
  SF_ASSIGN_OR_RETURN(std::string x, context.Input(0));
  const VarInfo x_info = context.InputInfo(0);
  SF_ASSIGN_OR_RETURN(const int axes, PoolSpatialAxes(context, x_info));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel,
                      PerAxisAttr(context, "kernel_shape", axes, std::nullopt));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                      PerAxisAttr(context, "strides", axes, 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations,
                      PerAxisAttr(context, "dilations", axes, 1));
  SF_ASSIGN_OR_RETURN(const int64_t ceil_mode, context.IntAttr("ceil_mode", 0));
  SF_ASSIGN_OR_RETURN(
      const std::vector<int32_t> paddings,
      SpatialPaddings(context, x_info, kernel, strides, dilations));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> ksize,
                      ToInt32s(kernel, "kernel_shape"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> strides32,
                      ToInt32s(strides, "strides"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> dilations32,
                      ToInt32s(dilations, "dilations"));
  int64_t p = 0;
  if (kind == PoolKind::kLp) {
    SF_ASSIGN_OR_RETURN(p, context.IntAttr("p", 2));
    SF_CHECK(p > 0, "attribute \"p\" = %d: expected a positive order", p);
    if (ceil_mode != 0) {
      return Unsupported(
          "LpPool with ceil_mode: windows past the padding would be summed "
          "as averages over fewer cells");
    }
    const std::string magnitude = context.Temp("magnitude");
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("abs").In("X", x).Out("Out", magnitude)));
    x = context.Temp("powers");
    SF_RETURN_IF_ERROR(EmitPower(context, magnitude, p, x));
  }
  const std::string pooled =
      kind == PoolKind::kLp ? context.Temp("mean_power") : context.Output(0);
  OpBuilder op(kPoolOps[axes - 1]);
  op.In("X", x)
      .Out("Out", pooled)
      .Attr("pooling_type", is_max ? "max" : "avg")
      .Attr("ksize", ksize)
      .Attr("strides", strides32)
      .Attr("paddings", paddings)
      .Attr("dilations", dilations32)
      .Attr("ceil_mode", ceil_mode != 0);
  if (is_max) {
    SF_ASSIGN_OR_RETURN(const int64_t storage_order,
                        context.IntAttr("storage_order", 0));
    SF_CHECK(storage_order == 0 || storage_order == 1,
             "attribute \"storage_order\" = %d: expected 0 (row major) or 1 "
             "(column major)",
             storage_order);
    if (context.HasOutput(1)) {
      op.Out("Indices", context.Output(1))
          .Attr("storage_order",
                storage_order == 0 ? "row_major" : "column_major");
    }
  } else if (kind == PoolKind::kAverage) {
    SF_ASSIGN_OR_RETURN(const int64_t count_include_pad,
                        context.IntAttr("count_include_pad", 0));
    op.Attr("exclusive", count_include_pad == 0);
  } else {
    op.Attr("exclusive", false);
  }
  SF_RETURN_IF_ERROR(context.Emit(op));
  if (kind != PoolKind::kLp) return absl::OkStatus();
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  const std::string sums = context.Temp("sum_power");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("scale")
                       .In("X", pooled)
                       .Out("Out", sums)
                       .Attr("scale", static_cast<float>(window))));
  return EmitPower(context, sums, 1.0 / p, context.Output(0));
}

absl::Status ConvertMaxPool(NodeContext& context) {
  return ConvertPool(context, PoolKind::kMax);
}

absl::Status ConvertAveragePool(NodeContext& context) {
  return ConvertPool(context, PoolKind::kAverage);
}

absl::Status ConvertLpPool(NodeContext& context) {
  return ConvertPool(context, PoolKind::kLp);
}

// LRN (13): X / (bias + alpha / size * the sum of X^2 over `size`
// channels around each)^beta. The channel sums are an average pooling
// over the channel axis of X^2 seen as [N, 1, C, rest], counting the
// zero padding at the ends, times size.
absl::Status ConvertLrn(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float alpha, context.FloatAttr("alpha", 1e-4f));
  SF_ASSIGN_OR_RETURN(const float beta, context.FloatAttr("beta", 0.75f));
  SF_ASSIGN_OR_RETURN(const float bias, context.FloatAttr("bias", 1.0f));
  SF_ASSIGN_OR_RETURN(const int64_t size, context.IntAttr("size"));
  SF_CHECK(size > 0, "attribute \"size\" = %d: expected a positive count",
           size);
  const VarInfo info = context.InputInfo(0);
  if (!info.has_dims || info.dims.size() < 3) {
    return Unsupported("the conversion needs the input's dims, [N, C, ...]");
  }
  int64_t rest = 1;
  for (size_t d = 2; d < info.dims.size(); ++d) rest *= info.dims[d];
  if (info.dims[0] < 0 || info.dims[1] < 0 || rest < 0) {
    return Unsupported("the conversion needs the input's dims, [N, C, ...]");
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  const std::string squares = context.Temp("squares");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("mul").In("X", x).In("Y", x).Out("Out", squares)));
  const std::string planes = context.Temp("channel_planes");
  SF_RETURN_IF_ERROR(context.Emit(
      OpBuilder("reshape")
          .In("X", squares)
          .Out("Out", planes)
          .Attr("shape",
                std::vector<int64_t>{info.dims[0], 1, info.dims[1], rest})));
  SF_ASSIGN_OR_RETURN(const int32_t size32, ToInt32(size, "size"));
  const int32_t before = (size32 - 1) / 2;
  const std::string mean = context.Temp("channel_mean");
  SF_RETURN_IF_ERROR(context.Emit(
      OpBuilder("pool2d")
          .In("X", planes)
          .Out("Out", mean)
          .Attr("pooling_type", "avg")
          .Attr("ksize", std::vector<int32_t>{size32, 1})
          .Attr("strides", std::vector<int32_t>{1, 1})
          .Attr("paddings",
                std::vector<int32_t>{before, size32 - 1 - before, 0, 0})
          .Attr("exclusive", false)));
  // bias + alpha / size * (mean * size).
  const std::string base = context.Temp("base");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("scale")
                                      .In("X", mean)
                                      .Out("Out", base)
                                      .Attr("scale", alpha)
                                      .Attr("bias", bias)));
  const std::string denominator = context.Temp("denominator");
  SF_RETURN_IF_ERROR(EmitPower(context, base, beta, denominator));
  const std::string shaped = context.Temp("denominator_shaped");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("reshape")
                       .In("X", denominator)
                       .Out("Out", shaped)
                       .Attr("shape", std::vector<int64_t>(info.dims.begin(),
                                                           info.dims.end()))));
  return context.Emit(OpBuilder("div")
                          .In("X", x)
                          .In("Y", shaped)
                          .Out("Out", context.Output(0)));
}

template <bool kIsMax>
absl::Status ConvertGlobalPool(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const int axes,
                      PoolSpatialAxes(context, context.InputInfo(0)));
  // pool requires ksize; global pooling ignores it.
  return context.Emit(OpBuilder(kPoolOps[axes - 1])
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("pooling_type", kIsMax ? "max" : "avg")
                          .Attr("ksize", std::vector<int32_t>(axes, 1))
                          .Attr("global_pooling", true));
}

// BatchNormalization with spatial = 0 (opsets 7 and 8) normalizes each
// activation on its own: scale, B, mean and var have X's shape without the
// batch axis, [C, D1, ...], and broadcast over the batch. In inference that
// is Y = (X - mean) / sqrt(var + epsilon) * scale + B, elementwise.
absl::Status EmitPerActivationNorm(NodeContext& context, float epsilon,
                                   const std::vector<std::string>& in) {
  const VarInfo x = context.InputInfo(0);
  constexpr const char* kNames[] = {"X", "scale", "B", "mean", "var"};
  for (int i = 1; i < 5; ++i) {
    const VarInfo param = context.InputInfo(i);
    SF_CHECK(!x.has_dims || !param.has_dims ||
                 param.dims.size() + 1 == x.dims.size(),
             "spatial = 0: input %d (%s, \"%s\") has shape %s, expected X's "
             "shape %s without the batch axis",
             i, kNames[i], context.InputName(i), DimsToString(param.dims),
             DimsToString(x.dims));
  }
  const std::string centered = context.Temp("centered");
  SF_RETURN_IF_ERROR(context.Emit(
      OpBuilder("sub").In("X", in[0]).In("Y", in[3]).Out("Out", centered)));
  const std::string shifted_var = context.Temp("var_plus_epsilon");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("scale")
                                      .In("X", in[4])
                                      .Out("Out", shifted_var)
                                      .Attr("bias", epsilon)));
  const std::string deviation = context.Temp("deviation");
  SF_RETURN_IF_ERROR(context.Emit(
      OpBuilder("sqrt").In("X", shifted_var).Out("Out", deviation)));
  const std::string normalized = context.Temp("normalized");
  SF_RETURN_IF_ERROR(context.Emit(OpBuilder("div")
                                      .In("X", centered)
                                      .In("Y", deviation)
                                      .Out("Out", normalized)));
  const std::string scaled = context.Temp("scaled");
  SF_RETURN_IF_ERROR(context.Emit(
      OpBuilder("mul").In("X", normalized).In("Y", in[1]).Out("Out", scaled)));
  return context.Emit(OpBuilder("add")
                          .In("X", scaled)
                          .In("Y", in[2])
                          .Out("Out", context.Output(0)));
}

// Since opset 14, training_mode = 1 normalizes with the batch's statistics
// and outputs the running ones moved towards them,
// running * momentum + batch * (1 - momentum), the variance biased: what
// scopeflow batch_norm does in training (is_test = false). Before opset 14
// training was asked for by the saved-statistics outputs, not converted.
// Before opset 9, spatial = 0 normalizes per activation (see
// EmitPerActivationNorm).
absl::Status ConvertBatchNormalization(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const float epsilon, context.FloatAttr("epsilon", 1e-5f));
  int64_t spatial = 1;
  if (context.opset() < 9) {
    SF_ASSIGN_OR_RETURN(spatial, context.IntAttr("spatial", 1));
  }
  int64_t training_mode = 0;
  if (context.opset() >= 14) {
    SF_ASSIGN_OR_RETURN(training_mode, context.IntAttr("training_mode", 0));
  }
  const bool training = training_mode != 0;
  float momentum = 0.9f;
  if (training) {
    SF_ASSIGN_OR_RETURN(momentum, context.FloatAttr("momentum", 0.9f));
  } else {
    // Momentum moves the running statistics, in training mode only.
    context.IgnoreAttr("momentum");
    for (int i = 1; i < context.OutputCount(); ++i) {
      if (!context.HasOutput(i)) continue;
      if (context.opset() >= 14) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "output %d (\"%s\"): the running statistics are outputs in "
            "training mode only, and training_mode is 0",
            i, context.Output(i)));
      }
      return Unsupported(absl::StrFormat(
          "output %d (\"%s\"): before opset 14 the statistics outputs ask "
          "for training mode, which is converted from opset 14 on "
          "(training_mode) only",
          i, context.Output(i)));
    }
  }
  std::vector<std::string> in;
  for (int i = 0; i < 5; ++i) {
    SF_ASSIGN_OR_RETURN(std::string name, context.Input(i));
    in.push_back(std::move(name));
  }
  if (spatial == 0) return EmitPerActivationNorm(context, epsilon, in);
  OpBuilder op("batch_norm");
  op.In("X", in[0])
      .In("Scale", in[1])
      .In("Bias", in[2])
      .In("Mean", in[3])
      .In("Variance", in[4])
      .Out("Y", context.Output(0))
      .Attr("epsilon", epsilon);
  if (training) {
    // Training writes the running statistics; temporaries take those the
    // node drops.
    op.Out("MeanOut", context.HasOutput(1) ? context.Output(1)
                                           : context.Temp("running_mean"))
        .Out("VarianceOut", context.HasOutput(2) ? context.Output(2)
                                                 : context.Temp("running_var"))
        .Attr("is_test", false)
        .Attr("momentum", momentum);
  }
  return context.Emit(op);
}

// LayerNormalization's Scale and B have the normalized shape
// X.shape[axis:]; scopeflow layer_norm takes them flattened to 1-D.
absl::StatusOr<std::string> FlatParam(NodeContext& context, int input,
                                      const char* hint) {
  SF_ASSIGN_OR_RETURN(const std::string name, context.Input(input));
  const VarInfo info = context.InputInfo(input);
  if (info.has_dims && info.dims.size() == 1) return name;
  const std::string flat = context.Temp(hint);
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("reshape")
                       .In("X", name)
                       .Out("Out", flat)
                       .Attr("shape", std::vector<int64_t>{-1})));
  return flat;
}

absl::Status ConvertLayerNormalization(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", -1));
  SF_ASSIGN_OR_RETURN(const float epsilon, context.FloatAttr("epsilon", 1e-5f));
  // The precision of the statistics: scopeflow accumulates them in double,
  // at least as precise as any stash_type.
  // The statistics outputs Mean and InvStdDev have X's dtype, as in ONNX's
  // reference implementation.
  context.IgnoreAttr("stash_type");
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string scale,
                      FlatParam(context, 1, "scale_1d"));
  SF_ASSIGN_OR_RETURN(const int32_t begin_norm_axis, ToInt32(axis, "axis"));
  OpBuilder op("layer_norm");
  op.In("X", x).In("Scale", scale);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string bias,
                        FlatParam(context, 2, "bias_1d"));
    op.In("Bias", bias);
  }
  op.Out("Y", context.Output(0));
  if (context.HasOutput(1)) op.Out("Mean", context.Output(1));
  if (context.HasOutput(2)) op.Out("InvStdDev", context.Output(2));
  op.Attr("begin_norm_axis", begin_norm_axis).Attr("epsilon", epsilon);
  return context.Emit(op);
}

// Dropout is the identity in inference mode (the default); in training mode
// (opset 12+: input training_mode true) it zeroes elements at random with
// probability ratio and scales the rest by 1 / (1 - ratio), as scopeflow
// dropout's upscale_in_train does, though with another random generator.
// Before opset 12 the ratio is an attribute and the node infers only. The
// mask output is bool in ONNX since opset 10 and of the input's dtype
// before, uint8 in scopeflow: cast.
absl::Status ConvertDropout(NodeContext& context) {
  float ratio = 0.5f;
  bool training = false;
  int64_t seed = 0;
  if (context.opset() < 12) {
    SF_ASSIGN_OR_RETURN(ratio, context.FloatAttr("ratio", 0.5f));
  } else {
    SF_ASSIGN_OR_RETURN(seed, context.IntAttr("seed", 0));
    if (context.HasInput(2) && !context.IsConstant(2)) {
      // The mode decides whether the ratio matters: both must be known.
      SF_RETURN_IF_ERROR(context.RequireConstants(
          {1, 2},
          "scopeflow dropout takes the mode (is_test) and the ratio as "
          "attributes"));
    }
    if (context.HasInput(2)) {
      SF_ASSIGN_OR_RETURN(
          const double mode,
          context.ConstantScalar(
              2, "scopeflow dropout takes the mode as an attribute (is_test)"));
      training = mode != 0;
    }
    // In inference mode the ratio does not matter, constant or not.
    if (training && context.HasInput(1)) {
      SF_ASSIGN_OR_RETURN(
          const double value,
          context.ConstantScalar(
              1, "scopeflow dropout takes the ratio as an attribute"));
      ratio = static_cast<float>(value);
    }
  }
  SF_ASSIGN_OR_RETURN(const int32_t seed32, ToInt32(seed, "seed"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("dropout");
  op.In("X", x).Out("Out", context.Output(0));
  std::string mask;
  if (context.HasOutput(1)) {
    mask = context.Temp("mask_uint8");
    op.Out("Mask", mask);
  }
  op.Attr("dropout_prob", ratio)
      .Attr("is_test", !training)
      .Attr("seed", seed32)
      .Attr("dropout_implementation", std::string("upscale_in_train"));
  SF_RETURN_IF_ERROR(context.Emit(op));
  if (mask.empty()) return absl::OkStatus();
  DataType mask_dtype = kBool;
  if (context.opset() < 10) {
    mask_dtype = context.InputInfo(0).dtype;
    if (mask_dtype == DATA_TYPE_UNSPECIFIED) {
      return Unsupported(
          "before opset 10 the mask has the input's dtype, which is unknown");
    }
  }
  return context.Emit(OpBuilder("cast")
                          .In("X", mask)
                          .Out("Out", context.Output(1))
                          .Attr("out_dtype", static_cast<int32_t>(mask_dtype)));
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> SpatialPaddings(
    NodeContext& context, const VarInfo& input,
    const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
    const std::vector<int64_t>& dilations) {
  const int n = static_cast<int>(kernel.size());
  SF_ASSIGN_OR_RETURN(const std::string auto_pad,
                      context.StringAttr("auto_pad", "NOTSET"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      context.IntsAttr("pads", std::vector<int64_t>(2 * n, 0)));
  // ONNX orders pads [x1_begin, x2_begin, ..., x1_end, x2_end, ...].
  std::vector<int64_t> begin(n, 0);
  std::vector<int64_t> end(n, 0);
  if (auto_pad == "NOTSET") {
    SF_CHECK(static_cast<int>(pads.size()) == 2 * n,
             "attribute \"pads\" = %s: expected %d values for %d-D windows",
             IntsToString(pads), 2 * n, n);
    for (int64_t p : pads) {
      SF_CHECK(p >= 0, "attribute \"pads\" = %s holds a negative value",
               IntsToString(pads));
    }
    for (int i = 0; i < n; ++i) {
      begin[i] = pads[i];
      end[i] = pads[n + i];
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // The output covers ceil(input / stride) positions; the padding that
    // needs is split evenly, the odd cell at the end (UPPER) or the
    // beginning (LOWER).
    for (int i = 0; i < n; ++i) {
      const int64_t size =
          input.has_dims && static_cast<int>(input.dims.size()) == n + 2
              ? input.dims[2 + i]
              : -1;
      if (size < 0 || kernel[i] < 0) {
        return Unsupported(absl::StrFormat(
            "auto_pad = %s needs the input's spatial size and the kernel's, "
            "which are unknown (input %s)",
            auto_pad,
            input.has_dims ? DimsToString(input.dims) : std::string("[?]")));
      }
      SF_CHECK(strides[i] > 0, "attribute \"strides\" must be positive");
      const int64_t out = (size + strides[i] - 1) / strides[i];
      const int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * strides[i] + extent - size);
      const int64_t small = total / 2;
      begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      end[i] = total - begin[i];
    }
  } else {
    SF_CHECK(auto_pad == "VALID",
             "attribute \"auto_pad\" is \"%s\": expected NOTSET, SAME_UPPER, "
             "SAME_LOWER or VALID",
             auto_pad);
  }
  // scopeflow orders paddings [before_0, after_0, before_1, after_1, ...].
  std::vector<int64_t> paddings;
  for (int i = 0; i < n; ++i) {
    paddings.push_back(begin[i]);
    paddings.push_back(end[i]);
  }
  return ToInt32s(paddings, "pads");
}

absl::StatusOr<std::vector<int32_t>> WindowPaddings(
    NodeContext& context, const VarInfo& input,
    const std::array<int64_t, 2>& kernel, const std::array<int64_t, 2>& strides,
    const std::array<int64_t, 2>& dilations) {
  return SpatialPaddings(context, input, {kernel[0], kernel[1]},
                         {strides[0], strides[1]},
                         {dilations[0], dilations[1]});
}

void AddNnConverters(ConverterMap& map) {
  map["MatMul"] = &ConvertMatMul;
  map["Gemm"] = &ConvertGemm;
  map["Conv"] = &ConvertConv;
  map["MaxPool"] = &ConvertMaxPool;
  map["AveragePool"] = &ConvertAveragePool;
  map["LpPool"] = &ConvertLpPool;
  map["LRN"] = &ConvertLrn;
  map["GlobalAveragePool"] = &ConvertGlobalPool<false>;
  map["GlobalMaxPool"] = &ConvertGlobalPool<true>;
  map["BatchNormalization"] = &ConvertBatchNormalization;
  map["LayerNormalization"] = &ConvertLayerNormalization;
  map["Dropout"] = &ConvertDropout;
}

}  // namespace onnx_import
}  // namespace scopeflow
