// Converters of ONNX ops that move elements or change shapes: Reshape,
// Flatten, Transpose, Concat, Split, Slice, Gather, Squeeze, Unsqueeze,
// Expand, Tile, Pad, Shape, and Constant (folded, no op).
//
// Where ONNX takes a shape, axes, sizes or pads as an input (since opset 5
// for Reshape, 10 for Slice, 11 for Pad, 13 for Split, Squeeze and
// Unsqueeze), scopeflow takes an attribute: the input must be a constant.
#include <algorithm>
#include <cmath>
#include <cstdint>
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
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> shape,
      context.ConstantInts(1,
                           "scopeflow reshape takes the shape as an "
                           "attribute"));
  if (allow_zero != 0 &&
      std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    return Unsupported(absl::StrFormat(
        "allowzero = 1 with a 0 in shape %s makes that dimension 0, but "
        "scopeflow reshape always copies the input's dimension for a 0",
        IntsToString(shape)));
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("reshape")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("shape", shape));
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
// (13+); without them, opset 18's num_outputs or the number of outputs
// gives equal parts, where opset 18 lets the last part be smaller.
absl::Status ConvertSplit(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const int64_t axis, context.IntAttr("axis", 0));
  SF_ASSIGN_OR_RETURN(const int32_t axis32, ToInt32(axis, "axis"));
  std::optional<std::vector<int64_t>> sizes;
  if (context.opset() >= 13) {
    if (context.HasInput(1)) {
      SF_ASSIGN_OR_RETURN(
          sizes, context.ConstantInts(1,
                                      "scopeflow split takes the sizes as "
                                      "an attribute"));
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
  if (sizes.has_value()) {
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

absl::Status ConvertSlice(NodeContext& context) {
  constexpr char kWhy[] =
      "scopeflow slice takes starts, ends, axes and steps as attributes";
  SF_RETURN_IF_ERROR(context.RequireConstants({1, 2, 3, 4}, kWhy));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> starts,
                      context.ConstantInts(1, kWhy));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> ends,
                      context.ConstantInts(2, kWhy));
  SF_CHECK(starts.size() == ends.size(),
           "starts %s and ends %s differ in length", IntsToString(starts),
           IntsToString(ends));
  std::vector<int64_t> axes;
  if (context.HasInput(3)) {
    SF_ASSIGN_OR_RETURN(axes, context.ConstantInts(3, kWhy));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(i);
  }
  std::vector<int64_t> steps;
  if (context.HasInput(4)) {
    SF_ASSIGN_OR_RETURN(steps, context.ConstantInts(4, kWhy));
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes32,
                      ToInt32s(axes, "axes"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  // Bounds beyond int32 (INT64_MAX for "to the end") clamp to the same
  // effect: numpy's rules clamp them into the dimension anyway. So does a
  // step beyond int32: it takes the first element only, as the clamped one.
  return context.Emit(OpBuilder("slice")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("axes", axes32)
                          .Attr("starts", ClampToInt32(starts))
                          .Attr("ends", ClampToInt32(ends))
                          .Attr("steps", ClampToInt32(steps)));
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
// since.
absl::StatusOr<std::vector<int64_t>> AxesOf(NodeContext& context,
                                            bool required) {
  if (context.opset() >= 13) {
    if (!context.HasInput(1)) {
      SF_CHECK(!required, "input 1 (axes) is required");
      return std::vector<int64_t>{};
    }
    return context.ConstantInts(
        1, absl::StrFormat("scopeflow %s takes the axes as an attribute",
                           required ? "unsqueeze" : "squeeze"));
  }
  if (required) return context.IntsAttr("axes");
  return context.IntsAttr("axes", std::vector<int64_t>{});
}

absl::Status ConvertSqueeze(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                      AxesOf(context, /*required=*/false));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes32,
                      ToInt32s(axes, "axes"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("squeeze")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("axes", axes32));
}

absl::Status ConvertUnsqueeze(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> axes,
                      AxesOf(context, /*required=*/true));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> axes32,
                      ToInt32s(axes, "axes"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("unsqueeze")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("axes", axes32));
}

// ONNX Expand broadcasts both ways: a 1 in the shape keeps the input's
// dimension, and the shape may have fewer dimensions than the input.
// scopeflow expand takes the output's shape, computed here from the
// input's.
absl::Status ConvertExpand(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> shape,
      context.ConstantInts(1,
                           "scopeflow expand takes the target shape as an "
                           "attribute"));
  const VarInfo info = context.InputInfo(0);
  if (!info.has_dims) {
    return Unsupported(
        "the input's rank is unknown: ONNX Expand broadcasts the input and "
        "the shape against each other, and scopeflow expand takes the "
        "resulting shape");
  }
  const int rank = static_cast<int>(info.dims.size());
  const int shape_rank = static_cast<int>(shape.size());
  const int out_rank = std::max(rank, shape_rank);
  std::vector<int64_t> out(out_rank);
  for (int i = 0; i < out_rank; ++i) {
    const int xi = i - (out_rank - rank);
    const int si = i - (out_rank - shape_rank);
    const int64_t d = xi >= 0 ? info.dims[xi] : 1;
    const int64_t s = si >= 0 ? shape[si] : 1;
    if (s == 1) {
      if (d < 0) {
        return Unsupported(absl::StrFormat(
            "shape %s keeps dimension %d of the input %s, which is unknown "
            "(scopeflow expand takes the resulting shape)",
            IntsToString(shape), xi, DimsToString(info.dims)));
      }
      out[i] = d;
    } else {
      SF_CHECK(d < 0 || d == 1 || d == s,
               "cannot expand the input %s to shape %s: dimension %d is %d",
               DimsToString(info.dims), IntsToString(shape), xi, d);
      out[i] = s;
    }
  }
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("expand")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("shape", out));
}

absl::Status ConvertTile(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(
      const std::vector<int64_t> repeats,
      context.ConstantInts(1,
                           "scopeflow tile takes the repeats as an "
                           "attribute"));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> repeats32,
                      ToInt32s(repeats, "repeats"));
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("tile")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("repeat_times", repeats32));
}

// Pad (opset 11+): pads as an input [begin_0, begin_1, ..., end_0, end_1,
// ...], an optional constant_value input and, since opset 18, an optional
// axes input naming the padded axes.
absl::Status ConvertPad(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string mode,
                      context.StringAttr("mode", "constant"));
  if (mode != "constant") {
    return Unsupported(absl::StrFormat(
        "mode = \"%s\": scopeflow pad fills the border with a constant only "
        "(it has no %s mode)",
        mode, mode));
  }
  constexpr char kWhy[] =
      "scopeflow pad takes the pads and the value as attributes";
  SF_RETURN_IF_ERROR(context.RequireConstants(context.opset() >= 18
                                                  ? std::vector<int>{1, 2, 3}
                                                  : std::vector<int>{1, 2},
                                              kWhy));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      context.ConstantInts(1, kWhy));
  double value = 0;
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(value, context.ConstantScalar(2, kWhy));
  }
  const float pad_value = static_cast<float>(value);
  if (static_cast<double>(pad_value) != value && !std::isnan(value)) {
    return Unsupported(absl::StrFormat(
        "constant_value = %.17g is not exactly a float32, the type of "
        "scopeflow pad's \"pad_value\"",
        value));
  }
  std::vector<int64_t> axes;
  int64_t rank = 0;
  if (context.opset() >= 18 && context.HasInput(3)) {
    SF_ASSIGN_OR_RETURN(axes, context.ConstantInts(3, kWhy));
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
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(OpBuilder("pad")
                          .In("X", x)
                          .Out("Out", context.Output(0))
                          .Attr("paddings", paddings32)
                          .Attr("pad_value", pad_value));
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
  map["Constant"] = &ConvertConstant;
}

}  // namespace onnx_import
}  // namespace scopeflow
