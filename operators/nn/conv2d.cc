// conv2d: 2-D convolution of NCHW tensors by OIHW filters, with strides,
// padding, dilation and groups, computed by oneDNN.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/nn/onednn.h"
#include "operators/nn/window.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct Conv2dAttrs {
  std::array<int64_t, 2> strides;
  std::array<int64_t, 2> dilations;
  Padding2d padding;
  int64_t groups;
};

Conv2dAttrs AttrsOf(const Attributes& attrs) {
  return {PairOf(attrs.Get<std::vector<int32_t>>("strides")),
          PairOf(attrs.Get<std::vector<int32_t>>("dilations")),
          PaddingOf(attrs.Get<std::vector<int32_t>>("paddings")),
          attrs.Get<int32_t>("groups")};
}

// Output [height, width] of `input` [N, C, H, W] convolved with `filter`
// [M, C / groups, kH, kW]; -1 where unknown, 0 where the filter does not
// fit.
std::array<int64_t, 2> OutputSize(const Conv2dAttrs& a, const Dims& input,
                                  const Dims& filter) {
  auto along = [&](int axis, int64_t pad_before, int64_t pad_after) {
    const int64_t k = filter[axis];
    if (k < 0) return int64_t{-1};
    const int64_t extent = a.dilations[axis - 2] * (k - 1) + 1;
    return WindowOutputSize(input[axis], extent, pad_before, pad_after,
                            a.strides[axis - 2]);
  };
  return {along(2, a.padding.top, a.padding.bottom),
          along(3, a.padding.left, a.padding.right)};
}

absl::Status InferConv2d(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckRank(context, "Input", 4, 4));
  SF_RETURN_IF_ERROR(CheckRank(context, "Filter", 4, 4));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Filter"));
  const bool has_bias = context.HasInput("Bias");
  if (has_bias) {
    SF_RETURN_IF_ERROR(CheckRank(context, "Bias", 1, 1));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Bias"));
  }
  const Conv2dAttrs a = AttrsOf(context.attrs());
  const VarInfo& input_info = context.Input("Input");
  const Dims input = Rank4DimsOf(input_info);
  const Dims filter = Rank4DimsOf(context.Input("Filter"));
  const std::string& input_name = context.InputName("Input");
  const std::string& filter_name = context.InputName("Filter");
  const int64_t channels = input[1];
  const int64_t filters = filter[0];
  SF_CHECK(channels < 0 || channels % a.groups == 0,
           "input \"Input\" (variable \"%s\") has shape %s: its %d channels "
           "are not divisible by groups = %d",
           input_name, DimsToString(input), channels, a.groups);
  SF_CHECK(filters < 0 || filters % a.groups == 0,
           "input \"Filter\" (variable \"%s\") has shape %s: its %d output "
           "channels are not divisible by groups = %d",
           filter_name, DimsToString(filter), filters, a.groups);
  SF_CHECK(channels < 0 || filter[1] < 0 || filter[1] * a.groups == channels,
           "input \"Input\" (variable \"%s\") has shape %s but \"Filter\" "
           "(variable \"%s\") has shape %s: expected the filter's dimension 1 "
           "to be channels / groups = %d / %d = %d",
           input_name, DimsToString(input), filter_name, DimsToString(filter),
           channels, a.groups, channels / a.groups);
  SF_CHECK((filter[2] < 0 || filter[2] > 0) && (filter[3] < 0 || filter[3] > 0),
           "input \"Filter\" (variable \"%s\") has shape %s: expected a "
           "positive kernel height and width",
           filter_name, DimsToString(filter));
  if (has_bias && context.Input("Bias").has_dims) {
    const int64_t bias = context.Input("Bias").dims[0];
    SF_CHECK(bias < 0 || filters < 0 || bias == filters,
             "input \"Bias\" (variable \"%s\") has shape [%d]: expected [%d], "
             "one value per output channel of \"Filter\" (variable \"%s\", "
             "shape %s)",
             context.InputName("Bias"), bias, filters, filter_name,
             DimsToString(filter));
  }
  const std::array<int64_t, 2> out = OutputSize(a, input, filter);
  SF_CHECK(out[0] != 0 && out[1] != 0,
           "input \"Input\" (variable \"%s\") has shape %s: too small for "
           "\"Filter\" (variable \"%s\", shape %s) with paddings %s, strides "
           "[%d, %d] and dilations [%d, %d]; expected a positive output "
           "height and width, got %s",
           input_name, DimsToString(input), filter_name, DimsToString(filter),
           PaddingToString(a.padding), a.strides[0], a.strides[1],
           a.dilations[0], a.dilations[1], DimsToString(out));
  context.SetOutput("Output", 0, input_info.dtype,
                    Dims{input[0], filters, out[0], out[1]});
  return absl::OkStatus();
}

// Output with no input channels: the bias, or zeros.
void FillWithBias(const Tensor* bias, Tensor& output) {
  const int64_t channels = output.dim(1);
  const int64_t plane = output.dim(2) * output.dim(3);
  float* out = output.data<float>();
  for (int64_t i = 0; i < output.numel(); ++i) {
    out[i] =
        bias == nullptr ? 0.0f : bias->data<float>()[(i / plane) % channels];
  }
}

// `memory` in the layout `desc` asks for: itself, or a reordered copy.
dnnl::memory InLayout(dnnl::memory memory, const dnnl::memory::desc& desc) {
  if (memory.get_desc() == desc) return memory;
  dnnl::memory reordered(desc, ThreadCpuEngine());
  dnnl::reorder(memory, reordered)
      .execute(ThreadCpuStream(), memory, reordered);
  return reordered;
}

absl::Status RunConv2d(const Conv2dAttrs& a, const Tensor& input,
                       const Tensor& filter, const Tensor* bias,
                       Tensor& output) {
  using dnnl::memory;
  using Tag = memory::format_tag;
  dnnl::engine& engine = ThreadCpuEngine();
  dnnl::stream& stream = ThreadCpuStream();
  const memory::dims src_dims(input.dims().begin(), input.dims().end());
  const memory::dims dst_dims(output.dims().begin(), output.dims().end());
  const int64_t g = a.groups;
  const memory::dims weights_dims =
      g == 1 ? memory::dims(filter.dims().begin(), filter.dims().end())
             : memory::dims{g, filter.dim(0) / g, filter.dim(1), filter.dim(2),
                            filter.dim(3)};
  const memory::desc src_md(src_dims, memory::data_type::f32, Tag::nchw);
  const memory::desc weights_md(weights_dims, memory::data_type::f32,
                                g == 1 ? Tag::oihw : Tag::goihw);
  const memory::desc dst_md(dst_dims, memory::data_type::f32, Tag::nchw);
  // Let oneDNN choose the layouts its fastest implementation wants.
  const memory::desc src_any(src_dims, memory::data_type::f32, Tag::any);
  const memory::desc weights_any(weights_dims, memory::data_type::f32,
                                 Tag::any);
  const memory::desc dst_any(dst_dims, memory::data_type::f32, Tag::any);
  const memory::dims strides{a.strides[0], a.strides[1]};
  // oneDNN counts dilation from 0: 0 is a dense filter.
  const memory::dims dilates{a.dilations[0] - 1, a.dilations[1] - 1};
  const memory::dims pad_l{a.padding.top, a.padding.left};
  const memory::dims pad_r{a.padding.bottom, a.padding.right};
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  const memory::desc bias_md({filter.dim(0)}, memory::data_type::f32, Tag::x);
  const dnnl::convolution_forward::primitive_desc pd(
      bias != nullptr ? dnnl::convolution_forward::desc(
                            prop, algo, src_any, weights_any, bias_md, dst_any,
                            strides, dilates, pad_l, pad_r)
                      : dnnl::convolution_forward::desc(
                            prop, algo, src_any, weights_any, dst_any, strides,
                            dilates, pad_l, pad_r),
      engine);

  memory src =
      InLayout(memory(src_md, engine, input.raw_data()), pd.src_desc());
  memory weights = InLayout(memory(weights_md, engine, filter.raw_data()),
                            pd.weights_desc());
  memory user_dst(dst_md, engine, output.raw_data());
  memory dst =
      pd.dst_desc() == dst_md ? user_dst : memory(pd.dst_desc(), engine);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (bias != nullptr) {
    args.emplace(DNNL_ARG_BIAS, memory(bias_md, engine, bias->raw_data()));
  }
  dnnl::convolution_forward(pd).execute(stream, args);
  if (dst != user_dst) {
    dnnl::reorder(dst, user_dst).execute(stream, dst, user_dst);
  }
  stream.wait();
  return absl::OkStatus();
}

absl::Status Conv2dKernel(KernelContext& context) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const Tensor* bias =
      context.HasInput("Bias") ? &context.Input("Bias") : nullptr;
  Tensor& output = *context.Output("Output");
  if (output.numel() == 0) return absl::OkStatus();
  if (input.numel() == 0) {
    FillWithBias(bias, output);
    return absl::OkStatus();
  }
  const Conv2dAttrs a = AttrsOf(context.attrs());
  return RunOneDnn("conv2d",
                   [&] { return RunConv2d(a, input, filter, bias, output); });
}

}  // namespace

SF_REGISTER_OP(conv2d)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Output("Output")
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          PaddingList())
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Infer(InferConv2d)
    .Kernel(DeviceType::kCPU, kFloat32, &Conv2dKernel);

}  // namespace scopeflow
