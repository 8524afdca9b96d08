// conv2d: 2-D convolution of NCHW (or, with data_format "NHWC", NHWC, or
// with "NCHW8c" and "NCHW16c", channel-blocked: operators/channel_blocks.h)
// tensors by OIHW filters, with strides, padding, dilation and groups. float32
// runs on oneDNN; float64, which numeric gradient checks need, on a reference
// im2col + gemm in NCHW.
//
// conv2d_grad: the gradients of Input, Filter and Bias, by oneDNN's
// backward-data and backward-weights primitives in float32 and by the
// reference in float64.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_spec.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "operators/gemm.h"
#include "operators/image_layout.h"
#include "operators/nn/conv2d_forward_cpu.h"
#include "operators/nn/conv_epilogue.h"
#include "operators/nn/conv_onednn.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/kernel_util.h"
#include "operators/nn/onednn.h"
#include "operators/nn/window.h"
#include "operators/strided_copy.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// How an Output (or its gradient) lays out its image: the op's
// data_format.
ImageFormat OutputFormat(const Conv2dAttrs& a) { return a.format; }

// How an Input or Output (or its gradient) lays out its image: the op's
// data_format, except that a blocked op's Input may be NCHW (rank 4).
ImageFormat FormatOf(const Dims& dims, const Conv2dAttrs& a) {
  if (a.Blocked() && dims.size() != 5) return ImageFormat::kNchw;
  return OutputFormat(a);
}

// The dims of an Input or Output in the op's format, `dims`, in [N, C, H,
// W] order: the order the geometry and oneDNN's descriptors use.
Dims NchwOf(const Dims& dims, const Conv2dAttrs& a) {
  return ImageDimsOf(ImageSizesOf(dims, FormatOf(dims, a)), ImageFormat::kNchw);
}

// The inverse of NchwOf for an Output: `nchw` in the op's data_format.
Dims OutputInFormat(const Dims& nchw, const Conv2dAttrs& a) {
  return ImageDimsOf(ImageSizesOf(nchw, ImageFormat::kNchw), OutputFormat(a));
}

// Input's dims as inference knows them, in its format: a blocked op's
// Input may have rank 4 (NCHW) or 5; unknown rank, four unknown dims.
Dims InputDimsOf(const VarInfo& info, const Conv2dAttrs& a) {
  if (a.Blocked() && info.has_dims && info.dims.size() == 5) return info.dims;
  return Rank4DimsOf(info);
}

// Output [height, width] of `input` [N, C, H, W] convolved with `filter`
// [M, C / groups, kH, kW]; -1 where unknown, 0 where the filter does not
// fit. An error, saying which, where a size does not fit in int64.
absl::StatusOr<std::array<int64_t, 2>> OutputSize(const Conv2dAttrs& a,
                                                  const Dims& input,
                                                  const Dims& filter) {
  std::array<int64_t, 2> out;
  for (int axis : {2, 3}) {
    const int64_t k = filter[axis];
    const char* along = axis == 2 ? "height" : "width";
    if (k < 0) {
      out[axis - 2] = -1;
      continue;
    }
    // The dilated filter: dilation * (k - 1) + 1 cells.
    std::optional<int64_t> extent = CheckedMul(a.dilations[axis - 2], k - 1);
    if (extent.has_value()) extent = CheckedAdd(*extent, 1);
    SF_CHECK(extent.has_value(),
             "along the %s, dilation %d spreads the filter's %d cells over "
             "more than int64 holds",
             along, a.dilations[axis - 2], k);
    const int64_t pad_before = axis == 2 ? a.padding.top : a.padding.left;
    const int64_t pad_after = axis == 2 ? a.padding.bottom : a.padding.right;
    absl::StatusOr<int64_t> size = WindowOutputSize(
        input[axis], *extent, pad_before, pad_after, a.strides[axis - 2]);
    SF_CHECK(size.ok(), "along the %s, %s", along, size.status().message());
    out[axis - 2] = *size;
  }
  return out;
}

// Checks the inputs of conv2d (which its gradient op reads too) and
// returns what the forward op writes to "Output".
absl::StatusOr<VarInfo> InferOutput(InferContext& context) {
  const Conv2dAttrs a = Conv2dAttrsOf(context.attrs());
  SF_RETURN_IF_ERROR(CheckRank(context, "Input", 4, a.Blocked() ? 5 : 4));
  SF_RETURN_IF_ERROR(CheckRank(context, "Filter", 4, 4));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Filter"));
  const bool has_bias = context.HasInput("Bias");
  if (has_bias) {
    SF_RETURN_IF_ERROR(CheckRank(context, "Bias", 1, 1));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Bias"));
  }
  const VarInfo& input_info = context.Input("Input");
  const Dims input_dims = InputDimsOf(input_info, a);
  const Dims input = NchwOf(input_dims, a);
  const Dims filter = Rank4DimsOf(context.Input("Filter"));
  const std::string& input_name = context.InputName("Input");
  const std::string& filter_name = context.InputName("Filter");
  // Input's shape as given, and the format that says which axis holds the
  // channels where it is not NCHW.
  const ImageFormat input_format = FormatOf(input_dims, a);
  const std::string input_shape =
      absl::StrCat(DimsToString(input_dims),
                   input_format == ImageFormat::kNchw
                       ? ""
                       : absl::StrCat(" (data_format \"",
                                      ImageFormatName(input_format), "\")"));
  const int64_t block = a.Block();
  if (ChannelBlockOf(input_format) > 0) {
    SF_CHECK(input_dims[4] < 0 || input_dims[4] == block,
             "input \"Input\" (variable \"%s\") has shape %s: expected its "
             "last dimension to be the %d channels of a block",
             input_name, input_shape, block);
  }
  const int64_t channels = input[1];
  const int64_t filters = filter[0];
  if (a.Blocked()) {
    SF_CHECK(filters < 0 || filters % block == 0,
             "input \"Filter\" (variable \"%s\") has shape %s: data_format "
             "\"%s\" writes output channels in blocks of %d, but the filter "
             "has %d output channels",
             filter_name, DimsToString(filter), ImageFormatName(a.format),
             block, filters);
  }
  SF_CHECK(channels < 0 || channels % a.groups == 0,
           "input \"Input\" (variable \"%s\") has shape %s: its %d channels "
           "are not divisible by groups = %d",
           input_name, input_shape, channels, a.groups);
  SF_CHECK(filters < 0 || filters % a.groups == 0,
           "input \"Filter\" (variable \"%s\") has shape %s: its %d output "
           "channels are not divisible by groups = %d",
           filter_name, DimsToString(filter), filters, a.groups);
  // channels % groups == 0 here: the quotient avoids filter[1] * groups,
  // which can overflow.
  SF_CHECK(channels < 0 || filter[1] < 0 || filter[1] == channels / a.groups,
           "input \"Input\" (variable \"%s\") has shape %s but \"Filter\" "
           "(variable \"%s\") has shape %s: expected the filter's dimension 1 "
           "to be channels / groups = %d / %d = %d",
           input_name, input_shape, filter_name, DimsToString(filter), channels,
           a.groups, channels / a.groups);
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
  const absl::StatusOr<std::array<int64_t, 2>> size =
      OutputSize(a, input, filter);
  SF_CHECK(size.ok(),
           "input \"Input\" (variable \"%s\") has shape %s and \"Filter\" "
           "(variable \"%s\") shape %s; with paddings %s, strides [%d, %d] "
           "and dilations [%d, %d], %s",
           input_name, input_shape, filter_name, DimsToString(filter),
           PaddingToString(a.padding), a.strides[0], a.strides[1],
           a.dilations[0], a.dilations[1], size.status().message());
  const std::array<int64_t, 2>& out = *size;
  SF_CHECK(out[0] != 0 && out[1] != 0,
           "input \"Input\" (variable \"%s\") has shape %s: too small for "
           "\"Filter\" (variable \"%s\", shape %s) with paddings %s, strides "
           "[%d, %d] and dilations [%d, %d]; expected a positive output "
           "height and width, got %s",
           input_name, input_shape, filter_name, DimsToString(filter),
           PaddingToString(a.padding), a.strides[0], a.strides[1],
           a.dilations[0], a.dilations[1], DimsToString(out));
  return VarInfo{input_info.dtype,
                 OutputInFormat(Dims{input[0], filters, out[0], out[1]}, a),
                 /*has_dims=*/true};
}

// Whether known dims `a` and `b` may be the same: equal where both known.
bool DimsMayMatch(const Dims& a, const Dims& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] >= 0 && b[d] >= 0 && a[d] != b[d]) return false;
  }
  return true;
}

absl::Status InferConv2d(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo output, InferOutput(context));
  const std::string& activation =
      context.attrs().Get<std::string>("activation");
  SF_CHECK(activation.empty() || !context.attrs().Get<bool>("fuse_relu"),
           "attribute \"fuse_relu\" and activation \"%s\" both given: "
           "expected one activation",
           activation);
  if (context.HasInput("Residual")) {
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "Input", "Residual"));
    const VarInfo& residual = context.Input("Residual");
    SF_CHECK(!residual.has_dims || DimsMayMatch(residual.dims, output.dims),
             "input \"Residual\" (variable \"%s\") has shape %s: expected "
             "Output's shape %s, to which it is added",
             context.InputName("Residual"), DimsToString(residual.dims),
             DimsToString(output.dims));
  }
  context.SetOutput("Output", output);
  return absl::OkStatus();
}

absl::Status InferConv2dGrad(InferContext& context) {
  SF_ASSIGN_OR_RETURN(const VarInfo output, InferOutput(context));
  SF_RETURN_IF_ERROR(
      nn::CheckGradInput(context, "Output@GRAD", output, "Output"));
  if (context.HasOutput("Bias@GRAD")) {
    SF_RETURN_IF_ERROR(nn::RequireInput(
        context, "Bias", "output \"Bias@GRAD\" takes the shape of \"Bias\""));
  }
  return GradsLikeInputs({"Input", "Filter", "Bias"})(context);
}

template <typename T>
void Zero(Tensor& tensor) {
  std::fill(tensor.data<T>(), tensor.data<T>() + tensor.numel(), T{0});
}

// The channel of element `i` of an Output (or its gradient) of `dims` in
// the op's format.
int64_t ChannelOfElement(int64_t i, const Dims& dims, const Conv2dAttrs& a) {
  const ImageFormat format = FormatOf(dims, a);
  switch (format) {
    case ImageFormat::kNchw8c:
    case ImageFormat::kNchw16c: {
      const int64_t block = ChannelBlockOf(format);
      const int64_t block_size = dims[2] * dims[3] * block;
      return (i / block_size) % dims[1] * block + i % block;
    }
    case ImageFormat::kNhwc:
      return i % dims[3];
    case ImageFormat::kNchw:
      break;
  }
  return i / (dims[2] * dims[3]) % dims[1];
}

// Output with no input channels: the bias, or zeros.
template <typename T>
void FillWithBias(const Tensor* bias, const Conv2dAttrs& a, Tensor& output) {
  T* out = output.data<T>();
  for (int64_t i = 0; i < output.numel(); ++i) {
    out[i] = bias == nullptr
                 ? T{0}
                 : bias->data<T>()[ChannelOfElement(i, output.dims(), a)];
  }
}

// Copies an image of `nchw` sizes from `from_format` to `to_format`: the
// reference convolution's way in and out of NCHW.
template <typename T>
void CopyImage(const T* from, ImageFormat from_format, const Dims& nchw,
               ImageFormat to_format, T* to) {
  const TransferBox box = TransferBoxOf(ImageSizesOf(nchw, ImageFormat::kNchw),
                                        from_format, to_format);
  CopyStrided(to, box.dst_strides, from, box.src_strides, box.dims, sizeof(T));
}

// A tensor's data in NCHW: `tensor`'s own where it is NCHW, else a copy
// held in `copy`.
template <typename T>
const T* NchwData(const Tensor& tensor, const Conv2dAttrs& a,
                  std::vector<T>& copy) {
  const ImageFormat format = FormatOf(tensor.dims(), a);
  if (format == ImageFormat::kNchw) return tensor.data<T>();
  copy.resize(tensor.numel());
  CopyImage(tensor.data<T>(), format, NchwOf(tensor.dims(), a),
            ImageFormat::kNchw, copy.data());
  return copy.data();
}

// Where to compute a result for `tensor` in NCHW: `tensor`'s own data where
// it is NCHW, else `scratch`, which StoreNchw then copies back.
template <typename T>
T* NchwTarget(Tensor& tensor, const Conv2dAttrs& a, std::vector<T>& scratch) {
  if (FormatOf(tensor.dims(), a) == ImageFormat::kNchw) {
    return tensor.data<T>();
  }
  scratch.resize(tensor.numel());
  return scratch.data();
}

template <typename T>
void StoreNchw(const std::vector<T>& scratch, const Conv2dAttrs& a,
               Tensor& tensor) {
  const ImageFormat format = FormatOf(tensor.dims(), a);
  if (format == ImageFormat::kNchw) return;
  CopyImage(scratch.data(), ImageFormat::kNchw, NchwOf(tensor.dims(), a),
            format, tensor.data<T>());
}

// The sizes the reference convolution works with.
struct ConvGeometry {
  int64_t batch, channels, height, width;  // Input
  int64_t filters, kernel_h, kernel_w;     // Filter
  int64_t out_h, out_w;                    // Output
  int64_t groups, group_channels, group_filters;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;

  // Rows of one group's im2col matrix, one per filter element.
  int64_t ColRows() const { return group_channels * kernel_h * kernel_w; }
  int64_t OutPlane() const { return out_h * out_w; }
};

ConvGeometry GeometryOf(const Conv2dAttrs& a, const Dims& input,
                        const Dims& filter, const Dims& output) {
  return {input[0],
          input[1],
          input[2],
          input[3],
          filter[0],
          filter[2],
          filter[3],
          output[2],
          output[3],
          a.groups,
          input[1] / a.groups,
          filter[0] / a.groups,
          a.strides[0],
          a.strides[1],
          a.dilations[0],
          a.dilations[1],
          a.padding.top,
          a.padding.left};
}

// Unfolds one group's channels of one sample, `image` [group_channels, H,
// W], into `col` [ColRows(), OutPlane()]: row (c, i, j) holds, for each
// output position, the input cell filter element (i, j) of channel c meets
// there (0 in the padding). The convolution is then a matrix product.
template <typename T>
void Im2Col(const ConvGeometry& g, const T* image, T* col) {
  const int64_t plane = g.OutPlane();
  for (int64_t c = 0; c < g.group_channels; ++c) {
    const T* channel = image + c * g.height * g.width;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        T* row = col + ((c * g.kernel_h + i) * g.kernel_w + j) * plane;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const int64_t ih = oh * g.stride_h - g.pad_top + i * g.dilation_h;
          T* out = row + oh * g.out_w;
          if (ih < 0 || ih >= g.height) {
            std::fill(out, out + g.out_w, T{0});
            continue;
          }
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t iw = ow * g.stride_w - g.pad_left + j * g.dilation_w;
            out[ow] =
                iw < 0 || iw >= g.width ? T{0} : channel[ih * g.width + iw];
          }
        }
      }
    }
  }
}

// The adjoint of Im2Col: adds each element of `col` to the input cell it
// was read from (padding cells drop theirs).
template <typename T>
void Col2ImAdd(const ConvGeometry& g, const T* col, T* image) {
  const int64_t plane = g.OutPlane();
  for (int64_t c = 0; c < g.group_channels; ++c) {
    T* channel = image + c * g.height * g.width;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const T* row = col + ((c * g.kernel_h + i) * g.kernel_w + j) * plane;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const int64_t ih = oh * g.stride_h - g.pad_top + i * g.dilation_h;
          if (ih < 0 || ih >= g.height) continue;
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const int64_t iw = ow * g.stride_w - g.pad_left + j * g.dilation_w;
            if (iw >= 0 && iw < g.width) {
              channel[ih * g.width + iw] += row[oh * g.out_w + ow];
            }
          }
        }
      }
    }
  }
}

// Per sample and group: Output_g = Filter_g [group_filters, ColRows()] x
// im2col(Input_g), then the bias. Input and Output in NCHW.
template <typename T>
absl::Status ReferenceConv2d(const ConvGeometry& g, const T* input,
                             const T* filter, const T* bias, T* output) {
  const int64_t k = g.ColRows();
  const int64_t plane = g.OutPlane();
  std::vector<T> col(k * plane);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t group = 0; group < g.groups; ++group) {
      Im2Col(g,
             input + (n * g.channels + group * g.group_channels) * g.height *
                         g.width,
             col.data());
      T* out = output + (n * g.filters + group * g.group_filters) * plane;
      SF_RETURN_IF_ERROR(Gemm(false, false, g.group_filters, plane, k, T{1},
                              filter + group * g.group_filters * k, k,
                              col.data(), plane, T{0}, out, plane));
      if (bias == nullptr) continue;
      for (int64_t m = 0; m < g.group_filters; ++m) {
        const T b = bias[group * g.group_filters + m];
        for (int64_t p = 0; p < plane; ++p) out[m * plane + p] += b;
      }
    }
  }
  return absl::OkStatus();
}

// The gradients of ReferenceConv2d's Input (`d_input`) and Filter
// (`d_filter`), each skipped when null: d_filter_g = dy_g x im2col(x)^T
// summed over samples, d_input_g = col2im(filter_g^T x dy_g). All in NCHW.
template <typename T>
absl::Status ReferenceConv2dGrad(const ConvGeometry& g, const T* input,
                                 const T* filter, const T* d_output, T* d_input,
                                 T* d_filter) {
  const int64_t k = g.ColRows();
  const int64_t plane = g.OutPlane();
  const int64_t image = g.group_channels * g.height * g.width;
  if (d_input != nullptr) {
    std::fill(d_input, d_input + g.batch * g.channels * g.height * g.width,
              T{0});
  }
  if (d_filter != nullptr) {
    std::fill(d_filter, d_filter + g.filters * k, T{0});
  }
  std::vector<T> col(k * plane);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t group = 0; group < g.groups; ++group) {
      const int64_t image_offset = (n * g.groups + group) * image;
      const T* dy =
          d_output + (n * g.filters + group * g.group_filters) * plane;
      const T* w = filter + group * g.group_filters * k;
      if (d_filter != nullptr) {
        Im2Col(g, input + image_offset, col.data());
        SF_RETURN_IF_ERROR(Gemm(false, true, g.group_filters, k, plane, T{1},
                                dy, plane, col.data(), plane, T{1},
                                d_filter + group * g.group_filters * k, k));
      }
      if (d_input != nullptr) {
        SF_RETURN_IF_ERROR(Gemm(true, false, k, plane, g.group_filters, T{1}, w,
                                k, dy, plane, T{0}, col.data(), plane));
        Col2ImAdd(g, col.data(), d_input + image_offset);
      }
    }
  }
  return absl::OkStatus();
}

// `memory` in the layout `desc` asks for: itself, or a reordered copy.
dnnl::memory InLayout(dnnl::memory memory, const dnnl::memory::desc& desc) {
  if (memory.get_desc() == desc) return memory;
  dnnl::memory reordered(desc, ThreadCpuEngine());
  dnnl::reorder(memory, reordered)
      .execute(ThreadCpuStream(), memory, reordered);
  return reordered;
}

// Where a primitive writes a result meant for `user`: `user` itself when
// the primitive wants its layout, otherwise a scratch buffer to reorder
// from (CopyOut).
dnnl::memory OutputIn(const dnnl::memory& user,
                      const dnnl::memory::desc& desc) {
  return user.get_desc() == desc ? user : dnnl::memory(desc, ThreadCpuEngine());
}

void CopyOut(dnnl::memory& result, dnnl::memory& user) {
  if (result != user) {
    dnnl::reorder(result, user).execute(ThreadCpuStream(), result, user);
  }
}

// The gradients of Input (into `d_input`) and Filter (`d_filter`), each
// skipped when null, by oneDNN's backward-data and backward-weights
// primitives (Winograd's where they pay: conv_onednn.h), between our
// layouts and theirs by reorders. Unlike the forward, this builds them on
// every run, leaning on oneDNN's own primitive cache: training steps are
// long enough that the set-up matters less.
absl::Status RunConv2dGrad(const Conv2dAttrs& a, const Tensor& input,
                           const Tensor& filter, const Tensor& d_output,
                           Tensor* d_input, Tensor* d_filter) {
  using dnnl::memory;
  dnnl::engine& engine = ThreadCpuEngine();
  dnnl::stream& stream = ThreadCpuStream();
  const OneDnnConv c =
      DescribeConv(a, NchwOf(input.dims(), a), FormatOf(input.dims(), a),
                   filter.dims(), NchwOf(d_output.dims(), a), OutputFormat(a));
  const memory user_dy(c.dst_md, engine, ReadOnlyHandle(d_output.raw_data()));
  // Output@GRAD in the layout the backward-data pass read it in, which the
  // backward-weights pass reads too where it wants the same layout (both
  // passes Winograd's, or both direct): reordered once, not twice.
  memory dy = user_dy;
  if (d_input != nullptr) {
    const dnnl::convolution_backward_data::primitive_desc pd =
        BackwardDataPrimitive(c, engine);
    dy = InLayout(user_dy, pd.diff_dst_desc());
    memory weights = InLayout(
        memory(c.weights_md, engine, ReadOnlyHandle(filter.raw_data())),
        pd.weights_desc());
    memory user_dx(c.src_md, engine, d_input->raw_data());
    memory diff_src = OutputIn(user_dx, pd.diff_src_desc());
    dnnl::convolution_backward_data(pd).execute(
        stream, {{DNNL_ARG_DIFF_DST, dy},
                 {DNNL_ARG_WEIGHTS, weights},
                 {DNNL_ARG_DIFF_SRC, diff_src}});
    CopyOut(diff_src, user_dx);
    // The other scratch memories die with this scope.
    stream.wait();
  }
  if (d_filter != nullptr) {
    const dnnl::convolution_backward_weights::primitive_desc pd =
        BackwardWeightsPrimitive(c, engine);
    memory src =
        InLayout(memory(c.src_md, engine, ReadOnlyHandle(input.raw_data())),
                 pd.src_desc());
    if (dy.get_desc() != pd.diff_dst_desc()) {
      dy = InLayout(user_dy, pd.diff_dst_desc());
    }
    memory user_dw(c.weights_md, engine, d_filter->raw_data());
    memory diff_weights = OutputIn(user_dw, pd.diff_weights_desc());
    dnnl::convolution_backward_weights(pd).execute(
        stream, {{DNNL_ARG_SRC, src},
                 {DNNL_ARG_DIFF_DST, dy},
                 {DNNL_ARG_DIFF_WEIGHTS, diff_weights}});
    CopyOut(diff_weights, user_dw);
    stream.wait();
  }
  return absl::OkStatus();
}

// The float64 convolution in any format: the reference works in NCHW, so
// other formats go through NCHW copies.
template <typename T>
absl::Status ReferenceConv2dInFormat(const Conv2dAttrs& a, const Tensor& input,
                                     const Tensor& filter, const Tensor* bias,
                                     Tensor& output) {
  const ConvGeometry g = GeometryOf(a, NchwOf(input.dims(), a), filter.dims(),
                                    NchwOf(output.dims(), a));
  std::vector<T> x, y;
  SF_RETURN_IF_ERROR(ReferenceConv2d<T>(
      g, NchwData(input, a, x), filter.data<T>(),
      bias == nullptr ? nullptr : bias->data<T>(), NchwTarget(output, a, y)));
  StoreNchw(y, a, output);
  return absl::OkStatus();
}

// What conv2d applies to its convolution: fuse_relu's relu, or the
// residual and activation of the fused forms (conv_epilogue.h).
ConvEpilogue EpilogueOf(const KernelContext& context) {
  ConvEpilogue e;
  e.residual = context.HasInput("Residual");
  e.activation =
      context.attrs().Get<bool>("fuse_relu")
          ? ConvActivation::kRelu
          : ConvActivationNamed(context.attrs().Get<std::string>("activation"))
                .value_or(ConvActivation::kNone);
  e.alpha = context.attrs().Get<float>("activation_alpha");
  e.beta = context.attrs().Get<float>("activation_beta");
  return e;
}

template <typename T>
absl::Status Conv2dKernel(KernelContext& context) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const Tensor* bias =
      context.HasInput("Bias") ? &context.Input("Bias") : nullptr;
  const Tensor* residual =
      context.HasInput("Residual") ? &context.Input("Residual") : nullptr;
  Tensor& output = *context.Output("Output");
  if (output.numel() == 0) return absl::OkStatus();
  const Conv2dAttrs a = Conv2dAttrsOf(context.attrs());
  const ConvEpilogue epilogue = EpilogueOf(context);
  auto apply_epilogue = [&] {
    if (epilogue.empty()) return;
    ApplyConvEpilogue<T>(epilogue,
                         residual == nullptr ? nullptr : residual->data<T>(),
                         output.data<T>(), output.numel());
  };
  if (input.numel() == 0) {
    FillWithBias<T>(bias, a, output);
    apply_epilogue();
    return absl::OkStatus();
  }
  if constexpr (std::is_same_v<T, float>) {
    return RunOneDnn("conv2d", [&] {
      return RunConv2d(a, NchwOf(input.dims(), a), FormatOf(input.dims(), a),
                       input, filter, bias, residual, epilogue,
                       NchwOf(output.dims(), a), output);
    });
  } else {
    SF_RETURN_IF_ERROR(
        ReferenceConv2dInFormat<T>(a, input, filter, bias, output));
    apply_epilogue();
    return absl::OkStatus();
  }
}

// How many partial sums LaneSums keeps: enough independent additions in
// flight to hide their latency (two-double SSE2 vectors, 8 registers).
constexpr int kSumLanes = 16;
// NCHW16c's block, which NCHW8c's divides: a block's channels must fall
// into lanes of their own (BiasGrad).
static_assert(kSumLanes % 16 == 0,
              "a block's channels must fall into lanes of their own");

// The sums in double of x[i] over the i of each lane: lane k sums x[k],
// x[k + kSumLanes], and so on. A single running sum waits for each
// addition to finish before the next; the lanes' sums are independent, so
// the compiler vectorises them and keeps them all in flight.
template <typename T>
std::array<double, kSumLanes> LaneSums(const T* x, int64_t n) {
  std::array<double, kSumLanes> lanes = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    // Unrolled so that the lanes stay in registers.
#pragma GCC unroll 16
    for (int k = 0; k < kSumLanes; ++k) lanes[k] += x[i + k];
  }
  for (int k = 0; i + k < n; ++k) lanes[k] += x[i + k];
  return lanes;
}

// Per-channel sums over `units` units of Output@GRAD (pixels, planes or
// blocks), `elements` values in all: sum_units(first, last, sums) adds
// units [first, last) into `sums`. Large gradients are split into one part
// per thread, each summing its units into sums of its own; the parts' sums
// are then added in order, so the result depends on the thread count
// alone, never on timing.
template <typename SumUnits>
std::vector<double> ChannelSums(int64_t units, int64_t elements,
                                int64_t channels, SumUnits sum_units) {
  const int parts = static_cast<int>(
      std::clamp<int64_t>(std::min(units, elements / kElementsWorthAThread), 1,
                          MaxParallelThreads()));
  std::vector<std::vector<double>> sums(parts,
                                        std::vector<double>(channels, 0.0));
  ParallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      sum_units(units * part / parts, units * (part + 1) / parts,
                sums[part].data());
    }
  });
  for (int part = 1; part < parts; ++part) {
    for (int64_t m = 0; m < channels; ++m) sums[0][m] += sums[part][m];
  }
  return std::move(sums[0]);
}

// Bias@GRAD: the sum of Output@GRAD over samples and positions, per output
// channel, accumulated in double.
template <typename T>
void BiasGrad(const Tensor& d_output, const Conv2dAttrs& a, Tensor& d_bias) {
  const int64_t channels = d_bias.numel();
  const int64_t elements = d_output.numel();
  const T* dy = d_output.data<T>();
  std::vector<double> sums;
  if (a.Nhwc()) {
    // Each pixel's channels are a run of the last axis: the channels' sums
    // are independent chains already, which the compiler vectorises.
    const int64_t pixels = elements / std::max<int64_t>(channels, 1);
    sums = ChannelSums(pixels, elements, channels,
                       [&](int64_t first, int64_t last, double* part) {
                         for (int64_t r = first; r < last; ++r) {
                           for (int64_t k = 0; k < channels; ++k) {
                             part[k] += dy[r * channels + k];
                           }
                         }
                       });
  } else if (a.Blocked()) {
    // A block of `block` channels over a sample's plane is contiguous, each
    // pixel's channels a run of it: channel k of the block is summed in the
    // lanes k, k + block, ...
    const int64_t block = a.Block();
    const int64_t plane = d_output.dim(2) * d_output.dim(3);
    const int64_t blocks = channels / block;
    sums = ChannelSums(d_output.dim(0) * blocks, elements, channels,
                       [&](int64_t first, int64_t last, double* part) {
                         for (int64_t b = first; b < last; ++b) {
                           const std::array<double, kSumLanes> lanes =
                               LaneSums(dy + b * plane * block, plane * block);
                           double* block_sums = part + b % blocks * block;
                           for (int k = 0; k < kSumLanes; ++k) {
                             block_sums[k % block] += lanes[k];
                           }
                         }
                       });
  } else {
    const int64_t plane = d_output.dim(2) * d_output.dim(3);
    sums = ChannelSums(d_output.dim(0) * channels, elements, channels,
                       [&](int64_t first, int64_t last, double* part) {
                         for (int64_t p = first; p < last; ++p) {
                           const std::array<double, kSumLanes> lanes =
                               LaneSums(dy + p * plane, plane);
                           for (double lane : lanes) part[p % channels] += lane;
                         }
                       });
  }
  for (int64_t m = 0; m < channels; ++m) {
    d_bias.data<T>()[m] = static_cast<T>(sums[m]);
  }
}

template <typename T>
absl::Status Conv2dGradKernel(KernelContext& context) {
  const Tensor& input = context.Input("Input");
  const Tensor& filter = context.Input("Filter");
  const Tensor& d_output = context.Input("Output@GRAD");
  Tensor* d_input = nn::OptionalOutput(context, "Input@GRAD");
  Tensor* d_filter = nn::OptionalOutput(context, "Filter@GRAD");
  const Conv2dAttrs a = Conv2dAttrsOf(context.attrs());
  if (context.HasOutput("Bias@GRAD")) {
    BiasGrad<T>(d_output, a, *context.Output("Bias@GRAD"));
  }
  if (d_input == nullptr && d_filter == nullptr) return absl::OkStatus();
  if (input.numel() == 0 || filter.numel() == 0 || d_output.numel() == 0) {
    // No product has terms: whatever gradient is asked for is zero (or
    // empty), and oneDNN would reject the zero dimensions.
    if (d_input != nullptr) Zero<T>(*d_input);
    if (d_filter != nullptr) Zero<T>(*d_filter);
    return absl::OkStatus();
  }
  if constexpr (std::is_same_v<T, float>) {
    return RunOneDnn("conv2d_grad", [&] {
      return RunConv2dGrad(a, input, filter, d_output, d_input, d_filter);
    });
  } else {
    // The reference works in NCHW: other formats go through NCHW copies.
    const ConvGeometry g = GeometryOf(a, NchwOf(input.dims(), a), filter.dims(),
                                      NchwOf(d_output.dims(), a));
    std::vector<T> x, dy, dx;
    SF_RETURN_IF_ERROR(ReferenceConv2dGrad<T>(
        g, NchwData(input, a, x), filter.data<T>(), NchwData(d_output, a, dy),
        d_input == nullptr ? nullptr : NchwTarget(*d_input, a, dx),
        d_filter == nullptr ? nullptr : d_filter->data<T>()));
    if (d_input != nullptr) StoreNchw(dx, a, *d_input);
    return absl::OkStatus();
  }
}

// conv2d_grad, preceded for fuse_relu by relu_grad (through Output, the
// relu's result), whose gradient of the convolution it then reads.
absl::Status MakeConv2dGrad(GradOpContext& grad) {
  std::vector<std::string> d_output = grad.OutputGrad("Output");
  bool fuse_relu = false;
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() == "fuse_relu") fuse_relu = attr.b();
    if (attr.name() == "activation" && !attr.s().empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "conv2d: no gradient through activation \"", attr.s(),
          "\", which inference fuses in; train the net as written, with the "
          "activation as an op of its own"));
    }
  }
  if (!grad.Input("Residual").empty()) {
    return absl::UnimplementedError(
        "conv2d: no gradient through input \"Residual\", which inference "
        "fuses in; train the net as written, with the add as an op of its "
        "own");
  }
  if (fuse_relu) {
    const std::vector<std::string> output = grad.Output("Output");
    const std::vector<std::string> d_convolution = {
        GradName(output[0] + "@CONV")};
    OpDef& relu = grad.AddOp("relu_grad");
    GradOpContext::SetInput(relu, "Out", output);
    GradOpContext::SetInput(relu, "Out@GRAD", d_output);
    GradOpContext::SetOutput(relu, "X@GRAD", d_convolution);
    d_output = d_convolution;
  }
  OpDef& conv = grad.AddOp("conv2d_grad");
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() != "fuse_relu" && attr.name() != "activation" &&
        attr.name() != "activation_alpha" && attr.name() != "activation_beta") {
      *conv.add_attrs() = attr;
    }
  }
  for (const char* slot : {"Input", "Filter", "Bias"}) {
    GradOpContext::SetInput(conv, slot, grad.Input(slot));
    GradOpContext::SetOutput(conv, GradName(slot), grad.InputGrad(slot));
  }
  GradOpContext::SetInput(conv, "Output@GRAD", d_output);
  return absl::OkStatus();
}

}  // namespace

// fuse_relu: Output = relu(convolution), in one pass (the executor's
// conv-fusion pass fuses a conv2d and the relu reading it so). Residual
// (optional, of Output's dims, dtype and format) is added to the
// convolution and activation (conv_epilogue.h: "" for none, or
// "leaky_relu", "clip", "sigmoid", "hard_swish"..., with
// activation_alpha and activation_beta as ConvActivation says) applied
// after: Output = activation(conv(Input) + Bias + Residual), as the
// conv-fusion pass writes an imported net's Add and activations into its
// convolutions (float32 on the CPU; no gradient through them).
// data_format "NHWC" takes Input [N, H, W, C] and writes Output [N, H_out,
// W_out, M]; the blocked data_formats "NCHW8c" and "NCHW16c"
// (operators/channel_blocks.h), of B = 8 and 16 channels a block, write
// Output [N, M / B, H_out, W_out, B] and take Input [N, C / B, H, W, B] or,
// for a first convolution over an image's few channels, NCHW [N, C, H, W].
// Filter [M, C / groups, kH, kW] and Bias [M] are the same in every
// format.
SF_REGISTER_OP(conv2d)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Input("Residual", /*optional=*/true)
    .Output("Output")
    .Layout(LayoutRole::kPrefersChannelsLast)
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          PaddingList())
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")),
          OneOf(ImageFormatNames()))
    .Attr("fuse_relu", AttrType::kBool, AttrValue(false))
    .Attr("activation", AttrType::kString, AttrValue(std::string()),
          OneOf(ConvActivationNames()))
    .Attr("activation_alpha", AttrType::kFloat, AttrValue(0.0f))
    .Attr("activation_beta", AttrType::kFloat, AttrValue(0.0f))
    .Infer(InferConv2d)
    .Grad(GradSpec("conv2d_grad")
              .ReadInput("Input")
              .ReadInput("Filter")
              .ReadInput("Bias")
              .ReadOutputGrad("Output")
              .WriteInputGrad("Input")
              .WriteInputGrad("Filter")
              .WriteInputGrad("Bias")
              .Maker(MakeConv2dGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &Conv2dKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Conv2dKernel<double>);

// Reads Bias only for the shape of Bias@GRAD.
SF_REGISTER_OP(conv2d_grad)
    .Input("Input")
    .Input("Filter")
    .Input("Bias", /*optional=*/true)
    .Input("Output@GRAD")
    .Output("Input@GRAD", /*optional=*/true)
    .Output("Filter@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("strides", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("paddings", AttrType::kInts, AttrValue(std::vector<int32_t>{0, 0}),
          PaddingList())
    .Attr("dilations", AttrType::kInts, AttrValue(std::vector<int32_t>{1, 1}),
          PositivePair())
    .Attr("groups", AttrType::kInt, AttrValue(1), Positive())
    .Attr("data_format", AttrType::kString, AttrValue(std::string("NCHW")),
          OneOf(ImageFormatNames()))
    .Infer(InferConv2dGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &Conv2dGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &Conv2dGradKernel<double>);

}  // namespace scopeflow
