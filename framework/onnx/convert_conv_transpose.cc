// Converter of ONNX ConvTranspose: 2-D to scopeflow conv2d_transpose, 3-D
// to conv3d_transpose, and 1-D to conv2d_transpose over [N, C, 1, L]
// between an unsqueeze and a squeeze. auto_pad and output_shape become
// explicit paddings (and output_padding where output_shape asks for more
// than the paddings can give), which needs the input's spatial size.
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

// A list attribute of one value per spatial axis (`fill` each if absent).
absl::StatusOr<std::vector<int64_t>> SpatialAttr(NodeContext& context,
                                                 const char* name, int axes,
                                                 int64_t fill) {
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> values,
                      context.IntsAttr(name, std::vector<int64_t>(axes, fill)));
  SF_CHECK(static_cast<int>(values.size()) == axes,
           "attribute \"%s\" = %s: expected %d values, one per spatial axis",
           name, IntsToString(values), axes);
  return values;
}

struct Geometry {
  std::vector<int64_t> strides, dilations, output_padding, begin, end;
};

// The paddings (and output_padding) that give the output ONNX asks for:
// explicit pads, none (VALID), or the output size of output_shape or of
// SAME_UPPER / SAME_LOWER (input * stride), where ONNX derives the pads
// from the size: total = stride * (in - 1) + output_padding + (kernel - 1)
// * dilation + 1 - size, split with the odd cell at the end for SAME_UPPER
// and at the beginning otherwise.
absl::Status Paddings(NodeContext& context, const VarInfo& x,
                      const std::vector<int64_t>& kernel, Geometry& g) {
  const int n = static_cast<int>(kernel.size());
  SF_ASSIGN_OR_RETURN(const std::string auto_pad,
                      context.StringAttr("auto_pad", "NOTSET"));
  SF_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                      context.IntsAttr("pads", std::vector<int64_t>(2 * n, 0)));
  SF_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape,
                      context.IntsAttr("output_shape", std::vector<int64_t>{}));
  g.begin.assign(n, 0);
  g.end.assign(n, 0);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  SF_CHECK(same || auto_pad == "NOTSET" || auto_pad == "VALID",
           "attribute \"auto_pad\" is \"%s\": expected NOTSET, SAME_UPPER, "
           "SAME_LOWER or VALID",
           auto_pad);
  if (output_shape.empty() && !same) {
    if (auto_pad == "VALID") return absl::OkStatus();
    SF_CHECK(static_cast<int>(pads.size()) == 2 * n,
             "attribute \"pads\" = %s: expected %d values for %d spatial axes",
             IntsToString(pads), 2 * n, n);
    for (int i = 0; i < n; ++i) {
      SF_CHECK(pads[i] >= 0 && pads[n + i] >= 0,
               "attribute \"pads\" = %s holds a negative value",
               IntsToString(pads));
      g.begin[i] = pads[i];
      g.end[i] = pads[n + i];
    }
    return absl::OkStatus();
  }
  // output_shape may also name the batch and channels.
  if (static_cast<int>(output_shape.size()) == n + 2) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  SF_CHECK(output_shape.empty() || static_cast<int>(output_shape.size()) == n,
           "attribute \"output_shape\" = %s: expected %d values, one per "
           "spatial axis",
           IntsToString(output_shape), n);
  for (int i = 0; i < n; ++i) {
    const int64_t in = x.dims[2 + i];
    if (in < 0 || kernel[i] < 0) {
      return Unsupported(absl::StrFormat(
          "%s needs the input's spatial size and the kernel's to derive the "
          "paddings, and they are unknown (input %s)",
          output_shape.empty() ? "auto_pad = " + auto_pad
                               : std::string("attribute \"output_shape\""),
          DimsToString(x.dims)));
    }
    const int64_t size =
        output_shape.empty() ? in * g.strides[i] : output_shape[i];
    const int64_t total = g.strides[i] * (in - 1) + g.output_padding[i] +
                          (kernel[i] - 1) * g.dilations[i] + 1 - size;
    // Halved rounding down, as ONNX's reference does (total may be
    // negative: an output larger than the unpadded one).
    const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
    g.begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
    g.end[i] = total - g.begin[i];
    // A negative end pad grows the output at the end: output_padding.
    if (g.end[i] < 0) {
      g.output_padding[i] -= g.end[i];
      g.end[i] = 0;
    }
    if (g.begin[i] < 0) {
      return Unsupported(absl::StrFormat(
          "an output of %d cells along spatial axis %d needs %d cells of "
          "padding before the input: scopeflow's transposed convolutions "
          "only crop",
          size, i, -g.begin[i]));
    }
  }
  return absl::OkStatus();
}

absl::Status ConvertConvTranspose(NodeContext& context) {
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  SF_ASSIGN_OR_RETURN(const std::string w, context.Input(1));
  const VarInfo x_info = context.InputInfo(0);
  const VarInfo w_info = context.InputInfo(1);
  if (!x_info.has_dims) {
    return Unsupported(
        "the input's rank is unknown: scopeflow picks conv2d_transpose or "
        "conv3d_transpose by it");
  }
  const int n = static_cast<int>(x_info.dims.size()) - 2;
  if (n < 1 || n > 3) {
    return Unsupported(absl::StrFormat(
        "ConvTranspose of an input of rank %d: scopeflow's transposed "
        "convolutions have 1 to 3 spatial axes (input rank 3 to 5)",
        n + 2));
  }
  Geometry g;
  SF_ASSIGN_OR_RETURN(g.strides, SpatialAttr(context, "strides", n, 1));
  SF_ASSIGN_OR_RETURN(g.dilations, SpatialAttr(context, "dilations", n, 1));
  SF_ASSIGN_OR_RETURN(g.output_padding,
                      SpatialAttr(context, "output_padding", n, 0));
  SF_ASSIGN_OR_RETURN(const int64_t group, context.IntAttr("group", 1));
  // The kernel's size is the filter's; kernel_shape, if given, repeats it.
  std::vector<int64_t> kernel(n, -1);
  if (w_info.has_dims && static_cast<int>(w_info.dims.size()) == n + 2) {
    kernel.assign(w_info.dims.begin() + 2, w_info.dims.end());
  }
  if (context.HasAttr("kernel_shape")) {
    SF_ASSIGN_OR_RETURN(const std::vector<int64_t> given,
                        SpatialAttr(context, "kernel_shape", n, 0));
    for (int i = 0; i < n; ++i) {
      SF_CHECK(kernel[i] < 0 || kernel[i] == given[i],
               "attribute \"kernel_shape\" = %s contradicts the filter's "
               "shape %s",
               IntsToString(given), DimsToString(w_info.dims));
      kernel[i] = given[i];
    }
  }
  SF_RETURN_IF_ERROR(Paddings(context, x_info, kernel, g));
  // The 1-D case runs as 2-D with a leading spatial axis of size 1.
  const bool one_d = n == 1;
  auto spatial = [&](const std::vector<int64_t>& values, int64_t fill) {
    std::vector<int64_t> out = values;
    if (one_d) out.insert(out.begin(), fill);
    return ToInt32s(out, "a spatial attribute");
  };
  std::vector<int64_t> paddings;
  if (one_d) paddings = {0, 0};
  for (int i = 0; i < n; ++i) {
    paddings.push_back(g.begin[i]);
    paddings.push_back(g.end[i]);
  }
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> strides32,
                      spatial(g.strides, 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> dilations32,
                      spatial(g.dilations, 1));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> output_padding32,
                      spatial(g.output_padding, 0));
  SF_ASSIGN_OR_RETURN(const std::vector<int32_t> paddings32,
                      ToInt32s(paddings, "pads"));
  SF_ASSIGN_OR_RETURN(const int32_t groups, ToInt32(group, "group"));
  std::string input = x;
  std::string filter = w;
  std::string output = context.Output(0);
  if (one_d) {
    input = context.Temp("input_2d");
    filter = context.Temp("filter_2d");
    output = context.Temp("output_2d");
    for (const auto& [from, to] : {std::pair(x, input), std::pair(w, filter)}) {
      SF_RETURN_IF_ERROR(
          context.Emit(OpBuilder("unsqueeze")
                           .In("X", from)
                           .Out("Out", to)
                           .Attr("axes", std::vector<int32_t>{2})));
    }
  }
  OpBuilder op(n == 3 ? "conv3d_transpose" : "conv2d_transpose");
  op.In("Input", input).In("Filter", filter);
  if (context.HasInput(2)) {
    SF_ASSIGN_OR_RETURN(const std::string bias, context.Input(2));
    op.In("Bias", bias);
  }
  op.Out("Output", output)
      .Attr("strides", strides32)
      .Attr("paddings", paddings32)
      .Attr("dilations", dilations32)
      .Attr("output_padding", output_padding32)
      .Attr("groups", groups);
  SF_RETURN_IF_ERROR(context.Emit(op));
  if (!one_d) return absl::OkStatus();
  return context.Emit(OpBuilder("squeeze")
                          .In("X", output)
                          .Out("Out", context.Output(0))
                          .Attr("axes", std::vector<int32_t>{2}));
}

}  // namespace

void AddConvTransposeConverters(ConverterMap& map) {
  map["ConvTranspose"] = &ConvertConvTranspose;
}

}  // namespace onnx_import
}  // namespace scopeflow
