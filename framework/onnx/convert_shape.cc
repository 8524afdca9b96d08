// Converters of ONNX ops that move elements or change shapes: Reshape,
// Flatten, Transpose, Concat, Split, Slice, Gather, Squeeze, Unsqueeze,
// Expand, Tile, Pad, Shape, and Constant and ConstantOfShape (folded when
// they can be, no op).
//
// Where ONNX takes a shape, axes, sizes, repeats or pads as an input (since
// opset 5 for Reshape, 10 for Slice, 11 for Pad, 13 for Split, Squeeze and
// Unsqueeze), a constant folds into the scopeflow op's attribute, and any
// other value (fed, or computed at run time) binds the op's input of the
// same meaning (see ConvertPad for the pads it cannot bind).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/onnx_tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::Status ConvertReshape(NodeContext& context) {
  int64_t allow_zero = 0;
  if (context.opset() >= 14) {
    SF_ASSIGN_OR_RETURN(allow_zero, context.IntAttr("allowzero", 0));
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("reshape");
  op.In("X", x).Out("Out", context.Output(0));
  if (context.IsConstant(1)) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> shape,
                        context.ConstantInts(1, "it is the target shape"));
    op.Attr("shape", shape);
  } else {
    SF_ASSIGN_OR_RETURN(const std::string shape, context.Input(1));
    op.In("Shape", shape);
  }
  if (allow_zero != 0) op.Attr("allowzero", true);
  return context.Emit(op);
}

absl::Status ConvertFlatten(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 1));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("flatten")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis32));
}

absl::Status ConvertTranspose(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  std::vector<int64_t> perm;
  if (context.HasAttr("perm")) {
    SF_ASSIGN_OR_RETURN(perm, context.IntsAttr("perm"));
  } else {
    // The default reverses the axes, which needs the rank.
    const VarInfo info = context.InputInfo(0);
    if (!info.has_dims) {
      return Unsupported(
          "no \"perm\": the default reverses the axes, and the input's rank "
          "is unknown (scopeflow transpose needs the permutation)");
    }
    for (int64_t i = static_cast<int64_t>(info.dims.size()) - 1; i >= 0; --i) {
      perm.push_back(i);
    }
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> perm32,
                      ToInt32s(perm, "perm"));
  return context.Emit(OpBuilder("transpose")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("perm", perm32));
}

absl::Status ConvertConcat(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis"));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  std::vector<std::string> inputs;
  for (int i = 0; i < context.InputCount(); ++i) {
    SF_ASSIGN_OR_RETURN(std::string name, context.Input(i));
    inputs.push_back(std::move(name));
  }
  return context.Emit(OpBuilder("concat")
                          .In("X", inputs)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis32));
}

// The size of dimension `axis` (negative counts from the end) of `info`,
// or -1 if unknown.
int64_t DimAt(const VarInfo& info, int64_t axis) {
  if (!info.has_dims) return -1;
  const int64_t rank = static_cast<int64_t>(info.dims.size());
  if (axis < -rank || axis >= rank) return -1;
  return info.dims[axis < 0 ? axis + rank : axis];
}

// Split's sizes come from the "split" attribute (opset < 13) or input
// (13+; bound as scopeflow's "Sections" unless constant); without them,
// opset 18's num_outputs or the number of outputs gives equal parts, where
// opset 18 lets the last part be smaller.
absl::Status ConvertSplit(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 0));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  std::optional<std::vector<int64_t>> sizes;
  std::optional<std::string> sizes_input;
  if (context.opset() >= 13) {
    if (context.IsConstant(1)) {
      SF_ASSIGN_OR_RETURN(sizes, context.ConstantInts(1, "it gives the sizes"));
    } else if (context.HasInput(1)) {
      SF_ASSIGN_OR_RETURN(sizes_input, context.Input(1));
    }
  } else if (context.HasAttr("split")) {
    SF_ASSIGN_OR_RETURN(sizes, context.IntsAttr("split"));
  }
  int64_t num_outputs = 0;
  if (context.opset() >= 18 && context.HasAttr("num_outputs")) {
    SF_ASSIGN_OR_RETURN(num_outputs, context.IntAttr("num_outputs"));
  }
  const int outputs = context.OutputCount();
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("split");
  op.In("X", x).Attr("axis", axis32);
  if (sizes_input.has_value()) {
    op.In("Sections", *sizes_input);
  } else if (sizes.has_value()) {
    SF_CHECK(static_cast<int>(sizes->size()) == outputs,
             "split sizes %s give %d parts for %d outputs",
             IntsToString(*sizes), sizes->size(), outputs);
    SF_ASSIGN_OR_RETURN(const std::vector<int32_t> sections,
                        ToInt32s(*sizes, "split"));
    op.Attr("sections", sections);
  } else {
    const int64_t parts = num_outputs > 0 ? num_outputs : outputs;
    SF_CHECK(parts == outputs, "num_outputs = %d, but the node has %d outputs",
             num_outputs, outputs);
    const int64_t dim = DimAt(context.InputInfo(0), axis);
    if (num_outputs > 0 && dim >= 0 && dim % parts != 0) {
      const int64_t chunk = (dim + parts - 1) / parts;
      const int64_t last = dim - chunk * (parts - 1);
      SF_CHECK(last >= 0,
               "num_outputs = %d cannot split a dimension of %d into parts of "
               "%d",
               parts, dim, chunk);
      std::vector<int64_t> uneven(parts - 1, chunk);
      uneven.push_back(last);
      SF_ASSIGN_OR_RETURN(const std::vector<int32_t> sections,
                          ToInt32s(uneven, "split"));
      op.Attr("sections", sections);
    } else {
      // An uneven split of a dimension unknown until run time fails there
      // (scopeflow's num splits evenly).
      SF_ASSIGN_OR_RETURN(const int32_t num, ToInt32(parts, "num_outputs"));
      op.Attr("num", num);
    }
  }
  std::vector<std::string> outs;
  for (int i = 0; i < outputs; ++i) {
    outs.push_back(context.HasOutput(i)
                       ? context.Output(i)
                       : context.Temp(absl::StrFormat("unused%d", i)));
  }
  op.Out("Out", outs);
  return context.Emit(op);
}

// Slice before opset 10: starts, ends and the optional axes are
// attributes, the steps 1, with the bounds clamped as since.
absl::Status ConvertAttributeSlice(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> starts,
                      context.IntsAttr("starts"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> ends,
                      context.IntsAttr("ends"));
  SF_CHECK(starts.size() == ends.size(),
           "attributes \"starts\" = %s and \"ends\" = %s differ in length",
           IntsToString(starts), IntsToString(ends));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("slice");
  op.In("X", x)
      .Out("Out", context.Output(0))
      .Attr("starts", ClampToInt32(starts))
      .Attr("ends", ClampToInt32(ends));
  if (context.HasAttr("axes")) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                        context.IntsAttr("axes"));
    SF_CHECK(axes.size() == starts.size(),
             "attribute \"axes\" = %s: expected one axis per start (%d)",
             IntsToString(axes), starts.size());
    SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes32,
                        ToInt32s(axes, "axes"));
    op.Attr("axes", axes32);
  }
  return context.Emit(op);
}

// Slice (opset 10+): starts, ends and the optional axes and steps are
// inputs, each folded into its attribute when constant, else bound to the
// scopeflow input of the same meaning. scopeflow slice's defaults are
// ONNX's: no axes are the first len(starts) axes, no steps all 1.
absl::Status ConvertSlice(NodeContext& context) {
  if (context.opset() < 10) return ConvertAttributeSlice(context);
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_CHECK(context.HasInput(1) && context.HasInput(2),
           "inputs 1 (starts) and 2 (ends) are required");
  OpBuilder op("slice");
  op.In("X", x).Out("Out", context.Output(0));
  struct Param {
    int input;
    const char* slot;
    const char* attr;
  };
  for (const Param& param :
       {Param{1, "Starts", "starts"}, Param{2, "Ends", "ends"},
        Param{3, "Axes", "axes"}, Param{4, "Steps", "steps"}}) {
    if (!context.HasInput(param.input)) continue;
    if (!context.IsConstant(param.input)) {
      SF_ASSIGN_OR_RETURN(const std::string name, context.Input(param.input));
      op.In(param.slot, name);
      continue;
    }
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> values,
                        context.ConstantInts(param.input, param.attr));
    if (param.input == 3) {
      SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes,
                          ToInt32s(values, "axes"));
      op.Attr(param.attr, axes);
    } else {
      // Bounds beyond int32 (INT64_MAX for "to the end") clamp to the same
      // effect: numpy's rules clamp them into the dimension anyway. So does
      // a step beyond int32: it takes the first element only, as the
      // clamped one.
      op.Attr(param.attr, ClampToInt32(values));
    }
  }
  return context.Emit(op);
}

absl::Status ConvertGather(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 0));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string index, context.Input(1));
  return context.Emit(OpBuilder("gather")
                          .In("X", x)
                          .In("Index", index)
                          .Out("Out", context.Output(0))
                          .Attr("axis", axis32));
}

// Squeeze's and Unsqueeze's axes: an attribute before opset 13, an input
// since (folded when constant, else bound to scopeflow's "Axes").
absl::Status AddAxes(NodeContext& context, bool required, OpBuilder& op) {
  std::vector<int64_t> axes;
  if (context.opset() >= 13) {
    if (!context.HasInput(1)) {
      SF_CHECK(!required, "input 1 (axes) is required");
    } else if (context.IsConstant(1)) {
      SF_ASSIGN_OR_RETURN(axes, context.ConstantInts(1, "it gives the axes"));
    } else {
      SF_ASSIGN_OR_RETURN(const std::string name, context.Input(1));
      op.In("Axes", name);
      return absl::OkStatus();
    }
  } else if (required) {
    SF_ASSIGN_OR_RETURN(axes, context.IntsAttr("axes"));
  } else {
    SF_ASSIGN_OR_RETURN(axes, context.IntsAttr("axes", std::vector<int64_t>{}));
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes32,
                      ToInt32s(axes, "axes"));
  op.Attr("axes", axes32);
  return absl::OkStatus();
}

absl::Status ConvertSqueeze(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("squeeze");
  op.In("X", x).Out("Out", context.Output(0));
  SF_RETURN_IF_ERROR(AddAxes(context, /*required=*/false, op));
  return context.Emit(op);
}

absl::Status ConvertUnsqueeze(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("unsqueeze");
  op.In("X", x).Out("Out", context.Output(0));
  SF_RETURN_IF_ERROR(AddAxes(context, /*required=*/true, op));
  return context.Emit(op);
}

// ONNX Expand broadcasts the input and the shape against each other, as
// scopeflow expand does.
absl::Status ConvertExpand(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("expand");
  op.In("X", x).Out("Out", context.Output(0));
  if (context.IsConstant(1)) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> shape,
                        context.ConstantInts(1, "it is the target shape"));
    op.Attr("shape", shape);
  } else {
    SF_ASSIGN_OR_RETURN(const std::string shape, context.Input(1));
    op.In("Shape", shape);
  }
  return context.Emit(op);
}

absl::Status ConvertTile(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("tile");
  op.In("X", x).Out("Out", context.Output(0));
  if (context.IsConstant(1)) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> repeats,
                        context.ConstantInts(1, "it gives the repeats"));
    SF_ASSIGN_OR_RETURN(const std::vector<int32_t> repeats32,
                        ToInt32s(repeats, "repeats"));
    op.Attr("repeat_times", repeats32);
  } else {
    SF_ASSIGN_OR_RETURN(const std::string repeats, context.Input(1));
    op.In("RepeatTimes", repeats);
  }
  return context.Emit(op);
}

// Binds the pads fed at run time (ONNX Pad's input 1) to `op`'s Paddings,
// reordered from ONNX's [begins..., ends...] to scopeflow's [begin_0,
// end_0, ...]: read as a [2, n] matrix, transposed and flattened. With axes
// other than every axis in order, the [n, 2] rows are gathered per axis of
// the input (of known rank) from them and a row of zeros for the axes not
// named.
absl::Status BindFedPads(NodeContext& context, OpBuilder& op, bool has_axes) {
  std::vector<int64_t> rows;  // per axis of the input; empty: as given
  if (has_axes) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                        context.ConstantInts(3, "it names the padded axes"));
    const VarInfo info = context.InputInfo(0);
    bool every_axis = info.has_dims && axes.size() == info.dims.size();
    const int64_t count = static_cast<int64_t>(axes.size());
    for (int64_t k = 0; every_axis && k < count; ++k) {
      every_axis = axes[k] == k || axes[k] == k - count;
    }
    if (!every_axis) {
      if (!info.has_dims) {
        return Unsupported(absl::StrFormat(
            "pads fed at run time for axes %s of an input of unknown rank: "
            "scopeflow pad's Paddings input holds the pads of every axis",
            IntsToString(axes)));
      }
      const int64_t rank = static_cast<int64_t>(info.dims.size());
      rows.assign(rank, count);
      for (int64_t k = 0; k < count; ++k) {
        const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
        SF_CHECK(a >= 0 && a < rank && rows[a] == count,
                 "axes %s: expected distinct axes of the rank-%d input",
                 IntsToString(axes), rank);
        rows[a] = k;
      }
    }
  }
  SF_ASSIGN_OR_RETURN(const std::string pads, context.Input(1));
  const std::string matrix = context.Temp("pads_matrix");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("reshape")
                       .In("X", pads)
                       .Out("Out", matrix)
                       .Attr("shape", std::vector<int64_t>{2, -1})));
  std::string pairs = context.Temp("pads_pairs");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("transpose")
                       .In("X", matrix)
                       .Out("Out", pairs)
                       .Attr("perm", std::vector<int32_t>{1, 0})));
  if (!rows.empty()) {
    Tensor zeros;
    SF_RETURN_IF_ERROR(zeros.Allocate(CPUPlace(), kInt64, Dims{1, 2}));
    zeros.data<int64_t>()[0] = zeros.data<int64_t>()[1] = 0;
    const std::string stacked = context.Temp("pads_rows");
    SF_RETURN_IF_ERROR(context.Emit(
        OpBuilder("concat")
            .In("X",
                std::vector<std::string>{
                    pairs, context.AddConstant("no_pads", std::move(zeros))})
            .Out("Out", stacked)
            .Attr("axis", int32_t{0})));
    Tensor index;
    SF_RETURN_IF_ERROR(index.Allocate(CPUPlace(), kInt64,
                                      Dims{static_cast<int64_t>(rows.size())}));
    std::copy(rows.begin(), rows.end(), index.data<int64_t>());
    const std::string per_axis = context.Temp("pads_per_axis");
    SF_RETURN_IF_ERROR(
        context.Emit(OpBuilder("gather")
                         .In("X", stacked)
                         .In("Index", context.AddConstant("pads_row_of_axis",
                                                          std::move(index)))
                         .Out("Out", per_axis)
                         .Attr("axis", int32_t{0})));
    pairs = per_axis;
  }
  const std::string paddings = context.Temp("paddings");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("reshape")
                       .In("X", pairs)
                       .Out("Out", paddings)
                       .Attr("shape", std::vector<int64_t>{-1})));
  return context.Emit(op.In("Paddings", paddings));
}

// Adds constant `pads` ([begin_0, begin_1, ..., end_0, end_1, ...] of
// `given_axes`, or of every axis without them) to `op` as scopeflow's
// [begin_0, end_0, begin_1, end_1, ...] of every axis, and emits it.
absl::Status EmitConstantPads(
    NodeContext& context, OpBuilder& op, const std::vector<int64_t>& pads,
    const std::optional<std::vector<int64_t>>& given_axes) {
  int64_t rank = 0;
  std::vector<int64_t> axes;
  if (given_axes.has_value()) {
    axes = *given_axes;
    const VarInfo info = context.InputInfo(0);
    if (!info.has_dims) {
      return Unsupported(
          "input axes names the padded axes, and the input's rank is unknown "
          "(scopeflow pad takes the pads of every axis)");
    }
    rank = static_cast<int64_t>(info.dims.size());
  } else {
    SF_CHECK(pads.size() % 2 == 0, "pads %s has an odd length",
             IntsToString(pads));
    rank = static_cast<int64_t>(pads.size() / 2);
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  SF_CHECK(pads.size() == 2 * axes.size(),
           "pads %s: expected 2 values per axis of %s", IntsToString(pads),
           IntsToString(axes));
  std::vector<int64_t> paddings(2 * rank, 0);
  const size_t n = axes.size();
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    SF_CHECK(axis >= 0 && axis < rank, "axis %d is out of range for rank %d",
             axes[k], rank);
    if (pads[k] < 0 || pads[k + n] < 0) {
      return Unsupported(absl::StrFormat(
          "pads %s holds a negative value, which crops: scopeflow pad only "
          "adds",
          IntsToString(pads)));
    }
    paddings[2 * axis] = pads[k];
    paddings[2 * axis + 1] = pads[k + n];
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> paddings32,
                      ToInt32s(paddings, "pads"));
  return context.Emit(op.Attr("paddings", paddings32));
}

// Pad (opset 11+): pads as an input [begin_0, begin_1, ..., end_0, end_1,
// ...], an optional constant_value input and, since opset 18, an optional
// axes input naming the padded axes. Constant pads and values fold into
// scopeflow pad's attributes; others bind its Paddings and PadValue
// inputs, the pads reordered to [begin_0, end_0, begin_1, end_1, ...].
// Before opset 11 the pads and the value are attributes.
absl::Status ConvertPad(NodeContext& context) {
  // scopeflow pad has ONNX's modes, under their names.
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("mode", "constant"));
  SF_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" ||
               (mode == "wrap" && context.opset() >= 19),
           "attribute \"mode\" is \"%s\": expected constant, reflect or edge%s",
           mode, context.opset() >= 19 ? " or wrap" : " (wrap since opset 19)");
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  OpBuilder op("pad");
  op.In("X", x).Out("Out", context.Output(0)).Attr("mode", mode);
  if (context.opset() < 11) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                        context.IntsAttr("pads"));
    SF_ASSIGN_OR_RETURN(const float value, context.FloatAttr("value", 0.0f));
    op.Attr("pad_value", value);
    return EmitConstantPads(context, op, pads, std::nullopt);
  }
  if (context.HasInput(2)) {
    bool folded = false;
    if (context.IsConstant(2)) {
      SF_ASSIGN_OR_RETURN(const double value,
                          context.ConstantScalar(2, "it is the pad value"));
      // The attribute is a float32: only a value it holds exactly folds.
      const float pad_value = static_cast<float>(value);
      if (static_cast<double>(pad_value) == value || std::isnan(value)) {
        op.Attr("pad_value", pad_value);
        folded = true;
      }
    }
    if (!folded) {
      SF_ASSIGN_OR_RETURN(const std::string value, context.Input(2));
      op.In("PadValue", value);
    }
  }
  const bool has_axes = context.opset() >= 18 && context.HasInput(3);
  if (has_axes) {
    SF_RETURN_IF_ERROR(context.RequireConstants(
        {3},
        "scopeflow pad pads every axis: the axes decide where the pads "
        "go"));
  }
  if (!context.IsConstant(1)) {
    return BindFedPads(context, op, has_axes);
  }
  constexpr char kWhy[] = "it holds the pads";
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      context.ConstantInts(1, kWhy));
  std::optional<std::vector<int64_t>> axes;
  if (has_axes) {
    SF_ASSIGN_OR_RETURN(axes, context.ConstantInts(3, kWhy));
  }
  return EmitConstantPads(context, op, pads, axes);
}

// Shape: the dims as int64, and since opset 15 only those in
// [start, end), with numpy's slicing rules.
absl::Status ConvertShape(NodeContext& context) {
  int64_t start = 0;
  std::optional<int64_t> end;
  if (context.opset() >= 15) {
    SF_ASSIGN_OR_RETURN(start, context.IntAttr("start", 0));
    if (context.HasAttr("end")) {
      SF_ASSIGN_OR_RETURN(end, context.IntAttr("end"));
    }
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  if (start == 0 && !end.has_value()) {
    return context.Emit(
        OpBuilder("shape").In("X", x).Out("Out", context.Output(0)));
  }
  const std::string dims = context.Temp("dims");
  SF_RETURN_IF_ERROR(
      context.Emit(OpBuilder("shape").In("X", x).Out("Out", dims)));
  return context.Emit(
      OpBuilder("slice")
          .In("X", dims)
          .Out("Out", context.Output(0))
          .Attr("axes", std::vector<int32_t>{0})
          .Attr("starts", ClampToInt32({start}))
          .Attr("ends", ClampToInt32({end.value_or(
                            std::numeric_limits<int64_t>::max())})));
}

// Size (1, 13, 19, 21, 23, 24, 25 widened the dtypes): the element count,
// an int64 scalar; folded to a constant where X's dims are known.
absl::Status ConvertSize(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder("size").In("X", x).Out("Out", context.Output(0)));
}

// A CPU tensor of `dims` holding `values` (as T).
template <typename T, typename V>
absl::StatusOr<Tensor> MakeTensor(DataType dtype, Dims dims,
                                  const std::vector<V>& values) {
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) {
    tensor.data<T>()[i] = static_cast<T>(values[i]);
  }
  return tensor;
}

// Constant's value is folded: it becomes a parameter only if an op reads it
// at run time.
absl::Status ConvertConstant(NodeContext& context) {
  if (context.HasAttr("value")) {
    const onnx::AttributeProto* attr = context.Attr("value");
    SF_CHECK(attr->has_t(), "attribute \"value\" holds no tensor");
    SF_ASSIGN_OR_RETURN(Tensor value, TensorFromOnnx(attr->t()));
    context.SetConstantOutput(0, std::move(value));
    return absl::OkStatus();
  }
  if (context.HasAttr("value_float")) {
    SF_ASSIGN_OR_RETURN(const float v, context.FloatAttr("value_float"));
    SF_ASSIGN_OR_RETURN(Tensor value,
                        MakeTensor<float>(kFloat32, {}, std::vector<float>{v}));
    context.SetConstantOutput(0, std::move(value));
    return absl::OkStatus();
  }
  if (context.HasAttr("value_floats")) {
    SF_ASSIGN_OR_RETURN(const std::vector<float> v,
                        context.FloatsAttr("value_floats"));
    SF_ASSIGN_OR_RETURN(
        Tensor value,
        MakeTensor<float>(kFloat32, {static_cast<int64_t>(v.size())}, v));
    context.SetConstantOutput(0, std::move(value));
    return absl::OkStatus();
  }
  if (context.HasAttr("value_int")) {
    SF_ASSIGN_OR_RETURN(const int64_t v, context.IntAttr("value_int"));
    SF_ASSIGN_OR_RETURN(
        Tensor value, MakeTensor<int64_t>(kInt64, {}, std::vector<int64_t>{v}));
    context.SetConstantOutput(0, std::move(value));
    return absl::OkStatus();
  }
  if (context.HasAttr("value_ints")) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> v,
                        context.IntsAttr("value_ints"));
    SF_ASSIGN_OR_RETURN(
        Tensor value,
        MakeTensor<int64_t>(kInt64, {static_cast<int64_t>(v.size())}, v));
    context.SetConstantOutput(0, std::move(value));
    return absl::OkStatus();
  }
  if (context.HasAttr("value_string") || context.HasAttr("value_strings")) {
    return Unsupported("a string constant: scopeflow has no string dtype");
  }
  if (context.HasAttr("sparse_value")) {
    return Unsupported("a sparse constant: scopeflow has no sparse tensors");
  }
  return absl::InvalidArgumentError(
      "Constant has no value attribute (value, value_float, value_floats, "
      "value_int or value_ints)");
}

// ConstantOfShape (opset 9+): input 0's shape filled with the one element
// of attribute value (float32 0 without it). A constant shape folds the
// whole output into a constant, for later nodes that need one; a shape
// known at run time only expands the value to it.
absl::Status ConvertConstantOfShape(NodeContext& context) {
  Tensor value;
  if (context.HasAttr("value")) {
    const onnx::AttributeProto* attr = context.Attr("value");
    SF_CHECK(attr->has_t(), "attribute \"value\" holds no tensor");
    SF_ASSIGN_OR_RETURN(value, TensorFromOnnx(attr->t()));
    SF_CHECK(value.numel() == 1,
             "attribute \"value\" holds %d elements: expected one",
             value.numel());
    SF_RETURN_IF_ERROR(value.Reshape({}));
  } else {
    SF_ASSIGN_OR_RETURN(value,
                        MakeTensor<float>(kFloat32, {}, std::vector<float>{0}));
  }
  if (!context.IsConstant(0)) {
    SF_ASSIGN_OR_RETURN(const std::string shape, context.Input(0));
    const std::string fill = context.AddConstant("value", std::move(value));
    return context.Emit(OpBuilder("expand")
                            .In("X", fill)
                            .In("Shape", shape)
                            .Out("Out", context.Output(0)));
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> shape,
                      context.ConstantInts(0, "it is the output's shape"));
  for (int64_t d : shape) {
    SF_CHECK(d >= 0, "shape %s holds a negative dimension",
             IntsToString(shape));
  }
  Tensor filled;
  SF_RETURN_IF_ERROR(filled.Allocate(CPUPlace(), value.dtype(),
                                     Dims(shape.begin(), shape.end())));
  const size_t size = SizeOf(value.dtype());
  char* out = static_cast<char*>(filled.raw_data());
  for (int64_t i = 0; i < filled.numel(); ++i) {
    std::memcpy(out + i * size, value.raw_data(), size);
  }
  context.SetConstantOutput(0, std::move(filled));
  return absl::OkStatus();
}

}  // namespace

void AddShapeConverters(ConverterMap& map) {
  map["Reshape"] = &ConvertReshape;
  map["Flatten"] = &ConvertFlatten;
  map["Transpose"] = &ConvertTranspose;
  map["Concat"] = &ConvertConcat;
  map["Split"] = &ConvertSplit;
  map["Slice"] = &ConvertSlice;
  map["Gather"] = &ConvertGather;
  map["Squeeze"] = &ConvertSqueeze;
  map["Unsqueeze"] = &ConvertUnsqueeze;
  map["Expand"] = &ConvertExpand;
  map["Tile"] = &ConvertTile;
  map["Pad"] = &ConvertPad;
  map["Shape"] = &ConvertShape;
  map["Size"] = &ConvertSize;
  map["Constant"] = &ConvertConstant;
  map["ConstantOfShape"] = &ConvertConstantOfShape;
}

}  // namespace onnx_import
}  // namespace scopeflow
