// batch_norm: normalizes each channel (axis 1) of X, then scales and shifts
// it. Inference (is_test) normalizes with the running statistics Mean and
// Variance; training normalizes with the batch's own statistics and updates
// the running ones.
//
// In inference, fuse_relu applies a relu to Y in the same pass (the layout
// rewrite sets it where only a relu reads Y, as in DenseNet's
// pre-activation blocks).
//
// Inference also takes images channels-last or channel-blocked
// (data_format "NHWC", "NCHW8c", "NCHW16c", operators/channel_blocks.h), so
// that the layout rewrite keeps a batch_norm no convolution absorbs (one
// after a concat, as in DenseNet) inside its region.
//
// batch_norm_grad: the gradients of X, Scale and Bias, for either mode, of
// NCHW images.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "framework/op_spec.h"
#include "operators/channel_blocks.h"
#include "operators/common.h"
#include "operators/nn/grad_util.h"
#include "operators/nn/kernel_util.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

constexpr const char* kChannelInputs[] = {"Scale", "Bias", "Mean", "Variance"};
constexpr const char* kChannelOutputs[] = {"MeanOut", "VarianceOut",
                                           "SavedMean", "SavedVariance"};

constexpr char kNchw[] = "NCHW";
constexpr char kNhwc[] = "NHWC";

// The number of channels of X in data_format `format`, -1 if unknown.
int64_t ChannelsOf(const VarInfo& x, absl::string_view format) {
  if (!x.has_dims) return -1;
  if (format == kNhwc) return x.dims.back();
  const int64_t block = ChannelBlockOfFormat(format);
  if (block == 0) return x.dims[1];
  return x.dims[1] < 0 ? -1 : x.dims[1] * block;
}

// batch_norm_grad has no data_format: it takes NCHW.
int64_t ChannelsOf(const InferContext& context) {
  return ChannelsOf(context.Input("X"),
                    context.attrs().Has("data_format")
                        ? context.attrs().Get<std::string>("data_format")
                        : kNchw);
}

// Error unless input `slot` is one value per channel of X, of X's dtype.
absl::Status CheckChannelInput(const InferContext& context,
                               absl::string_view slot) {
  SF_RETURN_IF_ERROR(CheckRank(context, slot, 1, 1));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", slot));
  const VarInfo& x = context.Input("X");
  const VarInfo& info = context.Input(slot);
  if (!info.has_dims) return absl::OkStatus();
  const int64_t channels = ChannelsOf(context);
  SF_CHECK(channels < 0 || info.dims[0] < 0 || info.dims[0] == channels,
           "input \"%s\" (variable \"%s\") has shape %s: expected [%d], one "
           "value per channel of \"X\" (variable \"%s\", shape %s)",
           slot, context.InputName(slot), DimsToString(info.dims), channels,
           context.InputName("X"), DimsToString(x.dims));
  return absl::OkStatus();
}

absl::Status InferBatchNorm(InferContext& context) {
  const std::string& format = context.attrs().Get<std::string>("data_format");
  const int64_t block = ChannelBlockOfFormat(format);
  SF_CHECK(!context.attrs().Get<bool>("fuse_relu") ||
               context.attrs().Get<bool>("is_test"),
           "fuse_relu applies in inference (is_test) only: a training "
           "batch_norm's gradient reads its output before the relu");
  if (format == kNchw) {
    SF_RETURN_IF_ERROR(
        CheckRank(context, "X", 2, std::numeric_limits<int>::max()));
  } else {
    SF_CHECK(context.attrs().Get<bool>("is_test"),
             "data_format \"%s\" normalizes in inference (is_test) only; "
             "training takes NCHW",
             format);
    SF_RETURN_IF_ERROR(
        CheckRank(context, "X", block > 0 ? 5 : 4, block > 0 ? 5 : 4));
    const VarInfo& x = context.Input("X");
    SF_CHECK(block == 0 || !x.has_dims || x.dims[4] < 0 || x.dims[4] == block,
             "input \"X\" (variable \"%s\") has shape %s: data_format "
             "\"%s\" expects blocks of %d channels in its last axis",
             context.InputName("X"), DimsToString(x.dims), format, block);
  }
  for (const char* slot : kChannelInputs) {
    SF_RETURN_IF_ERROR(CheckChannelInput(context, slot));
  }
  if (!context.attrs().Get<bool>("is_test")) {
    // Running statistics that nobody keeps would be lost silently.
    for (const char* slot : {"MeanOut", "VarianceOut"}) {
      SF_CHECK(context.HasOutput(slot),
               "training (is_test = false) updates the running statistics: "
               "bind output \"%s\" (usually to the variable of \"%s\")",
               slot, slot == std::string("MeanOut") ? "Mean" : "Variance");
    }
  }
  const VarInfo& x = context.Input("X");
  context.SetOutput("Y", x);
  const VarInfo channel{x.dtype, Dims{ChannelsOf(context)}, /*has_dims=*/true};
  for (const char* slot : kChannelOutputs) {
    if (context.HasOutput(slot)) context.SetOutput(slot, channel);
  }
  return absl::OkStatus();
}

// X seen as [batch, channels, inner].
struct Layout {
  int64_t batch, channels, inner;
};

Layout LayoutOf(const Tensor& x) {
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t inner =
      channels == 0 || batch == 0 ? 0 : x.numel() / (batch * channels);
  return {batch, channels, inner};
}

// X in any data_format seen as [outer, groups, inner, block], channel
// g * block + j at [., g, ., j]: NCHW [N, C, H*W, 1], NHWC [N*H*W, 1, 1, C],
// blocked [N, C / B, H*W, B].
struct ChannelView {
  int64_t outer, groups, inner, block;
};

ChannelView ChannelViewOf(const Tensor& x, absl::string_view format) {
  if (format == kNhwc) {
    const int64_t channels = x.dims().back();
    return {channels == 0 ? 0 : x.numel() / channels, 1, 1, channels};
  }
  const int64_t block = ChannelBlockOfFormat(format);
  if (block > 0) {
    return {x.dim(0), x.dim(1), x.dim(2) * x.dim(3), block};
  }
  const Layout l = LayoutOf(x);
  return {l.batch, l.channels, l.inner, 1};
}

// Rows of about this many elements are worth a thread.
constexpr int64_t kElementsWorthAThread = 1 << 15;

// dst = src * a + b over `inner` pixels of `block` channels (a and b one
// per channel), then max(0, .) where `relu`, in one pass. kBlock, where not
// 0, is `block` known at compile time: 16 channels fill an AVX-512 vector.
template <typename T, int64_t kBlock = 0>
inline __attribute__((always_inline)) void NormalizeRowLoop(
    const T* __restrict src, T* __restrict dst, const T* __restrict a,
    const T* __restrict b, int64_t inner, int64_t block, bool relu) {
  const int64_t n = kBlock > 0 ? kBlock : block;
  if (n == 1) {
    const T a0 = a[0], b0 = b[0];
    if (relu) {
      for (int64_t i = 0; i < inner; ++i) {
        const T v = src[i] * a0 + b0;
        dst[i] = v > T{0} ? v : T{0};
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * a0 + b0;
    }
    return;
  }
  for (int64_t i = 0; i < inner; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const T v = src[i * n + j] * a[j] + b[j];
      dst[i * n + j] = relu && !(v > T{0}) ? T{0} : v;
    }
  }
}

// NormalizeRowLoop on the widest vectors the CPU has
// (platform/vector_clones.h; GCC clones non-template functions only), for
// the channel blocks' sizes and any other.
SF_WIDEST_VECTORS void NormalizeRow(const float* src, float* dst,
                                    const float* a, const float* b,
                                    int64_t inner, int64_t block, bool relu) {
  if (block == 16) {
    NormalizeRowLoop<float, 16>(src, dst, a, b, inner, block, relu);
  } else if (block == 8) {
    NormalizeRowLoop<float, 8>(src, dst, a, b, inner, block, relu);
  } else {
    NormalizeRowLoop<float>(src, dst, a, b, inner, block, relu);
  }
}
SF_WIDEST_VECTORS void NormalizeRow(const double* src, double* dst,
                                    const double* a, const double* b,
                                    int64_t inner, int64_t block, bool relu) {
  NormalizeRowLoop<double>(src, dst, a, b, inner, block, relu);
}

// Y = (X - mean) * inv_std * scale + bias per channel, folded into
// Y = X * a + b, over rows of `block` channels (one row per pixel in NHWC)
// or of one channel's pixels (NCHW), on the threads of ParallelFor.
template <typename T>
void Normalize(const Tensor& x, absl::string_view format, const T* scale,
               const T* bias, const std::vector<double>& mean,
               const std::vector<double>& inv_std, bool relu, Tensor& y) {
  const ChannelView v = ChannelViewOf(x, format);
  const int64_t channels = v.groups * v.block;
  std::vector<T> a(channels), b(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double ac = scale[c] * inv_std[c];
    a[c] = static_cast<T>(ac);
    b[c] = static_cast<T>(bias[c] - mean[c] * ac);
  }
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const int64_t rows = v.outer * v.groups;
  const int64_t row = v.inner * v.block;
  ParallelFor(
      rows,
      std::max<int64_t>(1, kElementsWorthAThread / std::max<int64_t>(row, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t group = r % v.groups;
          NormalizeRow(in + r * row, out + r * row,
                       a.data() + group * v.block, b.data() + group * v.block,
                       v.inner, v.block, relu);
        }
      });
}

// Inference: the running statistics normalize. Bound outputs of the other
// slots get what training would leave for a gradient in this mode: the
// running statistics unchanged, SavedMean = Mean and SavedVariance their
// inverse standard deviation.
template <typename T>
absl::Status BatchNormInference(KernelContext& context, double epsilon) {
  const Tensor& x = context.Input("X");
  const std::string& format = context.attrs().Get<std::string>("data_format");
  const int64_t channels = context.Input("Mean").numel();
  const T* mean = context.Input("Mean").data<T>();
  const T* variance = context.Input("Variance").data<T>();
  std::vector<double> mean_d(channels), inv_std(channels);
  for (int64_t c = 0; c < channels; ++c) {
    mean_d[c] = mean[c];
    inv_std[c] = 1.0 / std::sqrt(variance[c] + epsilon);
  }
  Normalize<T>(x, format, context.Input("Scale").data<T>(),
               context.Input("Bias").data<T>(), mean_d, inv_std,
               context.attrs().Get<bool>("fuse_relu"), *context.Output("Y"));
  T* mean_out = nn::OptionalOutputData<T>(context, "MeanOut");
  T* variance_out = nn::OptionalOutputData<T>(context, "VarianceOut");
  T* saved_mean = nn::OptionalOutputData<T>(context, "SavedMean");
  T* saved_variance = nn::OptionalOutputData<T>(context, "SavedVariance");
  for (int64_t c = 0; c < channels; ++c) {
    // Harmless when MeanOut is Mean itself (in place).
    if (mean_out != nullptr) mean_out[c] = mean[c];
    if (variance_out != nullptr) variance_out[c] = variance[c];
    if (saved_mean != nullptr) saved_mean[c] = mean[c];
    if (saved_variance != nullptr) {
      saved_variance[c] = static_cast<T>(inv_std[c]);
    }
  }
  return absl::OkStatus();
}

// Training, as Paddle's CPU kernel: the batch mean and biased variance over
// N and the spatial axes normalize, and the running statistics move towards
// them, running = momentum * running + (1 - momentum) * batch, with the
// biased variance too (Paddle's GPU kernel, through cuDNN, uses the
// unbiased one there). SavedMean gets the batch mean and SavedVariance
// 1 / sqrt(variance + epsilon), which the gradient reads.
template <typename T>
absl::Status BatchNormTraining(KernelContext& context, double epsilon) {
  const Tensor& x = context.Input("X");
  const Layout l = LayoutOf(x);
  const int64_t count = l.batch * l.inner;
  SF_CHECK(count > 0,
           "training needs at least one value per channel of input \"X\" "
           "(variable \"%s\", shape %s) for the batch statistics",
           context.InputName("X"), DimsToString(x.dims()));
  const T* in = x.data<T>();
  std::vector<double> mean(l.channels, 0.0), variance(l.channels, 0.0),
      inv_std(l.channels);
  for (int64_t c = 0; c < l.channels; ++c) {
    double sum = 0;
    for (int64_t n = 0; n < l.batch; ++n) {
      const T* row = in + (n * l.channels + c) * l.inner;
      for (int64_t i = 0; i < l.inner; ++i) sum += row[i];
    }
    mean[c] = sum / count;
    double squares = 0;
    for (int64_t n = 0; n < l.batch; ++n) {
      const T* row = in + (n * l.channels + c) * l.inner;
      for (int64_t i = 0; i < l.inner; ++i) {
        squares += (row[i] - mean[c]) * (row[i] - mean[c]);
      }
    }
    variance[c] = squares / count;
    inv_std[c] = 1.0 / std::sqrt(variance[c] + epsilon);
  }
  Normalize<T>(x, kNchw, context.Input("Scale").data<T>(),
               context.Input("Bias").data<T>(), mean, inv_std,
               /*relu=*/false, *context.Output("Y"));

  const double momentum = context.attrs().Get<float>("momentum");
  // MeanOut and VarianceOut may be Mean and Variance themselves: each
  // element is read before it is written.
  const T* running_mean = context.Input("Mean").data<T>();
  const T* running_variance = context.Input("Variance").data<T>();
  T* mean_out = context.Output("MeanOut")->data<T>();
  T* variance_out = context.Output("VarianceOut")->data<T>();
  T* saved_mean = nn::OptionalOutputData<T>(context, "SavedMean");
  T* saved_variance = nn::OptionalOutputData<T>(context, "SavedVariance");
  for (int64_t c = 0; c < l.channels; ++c) {
    mean_out[c] =
        static_cast<T>(momentum * running_mean[c] + (1 - momentum) * mean[c]);
    variance_out[c] = static_cast<T>(momentum * running_variance[c] +
                                     (1 - momentum) * variance[c]);
    if (saved_mean != nullptr) saved_mean[c] = static_cast<T>(mean[c]);
    if (saved_variance != nullptr) {
      saved_variance[c] = static_cast<T>(inv_std[c]);
    }
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status BatchNormKernel(KernelContext& context) {
  const double epsilon = context.attrs().Get<float>("epsilon");
  return context.attrs().Get<bool>("is_test")
             ? BatchNormInference<T>(context, epsilon)
             : BatchNormTraining<T>(context, epsilon);
}

// Training's gradient reads the batch statistics the forward saved;
// inference's reads the running ones, which it left as they were.
absl::Status MakeBatchNormGrad(GradOpContext& grad) {
  const bool is_test = nn::BoolAttrOf(grad.forward(), "is_test", true);
  for (const AttrDef& attr : grad.forward().attrs()) {
    SF_CHECK(attr.name() != "data_format" || attr.s() == kNchw,
             "the gradient of batch_norm takes NCHW images: data_format "
             "\"%s\" has none",
             attr.s());
    SF_CHECK(attr.name() != "fuse_relu" || !attr.b(),
             "batch_norm with fuse_relu has no gradient: differentiate the "
             "net before the layout rewrite fuses the relu");
  }
  if (!is_test) {
    for (const char* slot : {"SavedMean", "SavedVariance"}) {
      SF_CHECK(!grad.Output(slot).empty(),
               "output \"%s\" is not bound: the gradient of training "
               "batch_norm reads the batch statistics the forward saves "
               "there; bind SavedMean and SavedVariance",
               slot);
    }
  }
  OpDef& op = grad.AddOp("batch_norm_grad");
  GradOpContext::SetInput(op, "X", grad.Input("X"));
  GradOpContext::SetInput(op, "Scale", grad.Input("Scale"));
  if (is_test) {
    GradOpContext::SetInput(op, "Mean", grad.Input("Mean"));
    GradOpContext::SetInput(op, "Variance", grad.Input("Variance"));
  } else {
    GradOpContext::SetInput(op, "SavedMean", grad.Output("SavedMean"));
    GradOpContext::SetInput(op, "SavedVariance", grad.Output("SavedVariance"));
  }
  GradOpContext::SetInput(op, "Y@GRAD", grad.OutputGrad("Y"));
  for (const char* slot : {"X", "Scale", "Bias"}) {
    GradOpContext::SetOutput(op, GradName(slot), grad.InputGrad(slot));
  }
  for (const AttrDef& attr : grad.forward().attrs()) {
    if (attr.name() != "data_format" && attr.name() != "fuse_relu") {
      *op.add_attrs() = attr;
    }
  }
  return absl::OkStatus();
}

absl::Status InferBatchNormGrad(InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckRank(context, "X", 2, std::numeric_limits<int>::max()));
  SF_RETURN_IF_ERROR(CheckChannelInput(context, "Scale"));
  const bool is_test = context.attrs().Get<bool>("is_test");
  for (const char* slot :
       is_test ? std::vector<const char*>{"Mean", "Variance"}
               : std::vector<const char*>{"SavedMean", "SavedVariance"}) {
    SF_RETURN_IF_ERROR(nn::RequireInput(
        context, slot,
        is_test ? "the gradient in inference mode reads the running "
                  "statistics"
                : "the gradient in training mode reads the batch statistics "
                  "the forward saved"));
    SF_RETURN_IF_ERROR(CheckChannelInput(context, slot));
  }
  const VarInfo& x = context.Input("X");
  SF_RETURN_IF_ERROR(nn::CheckGradInput(context, "Y@GRAD", x, "Y"));
  if (context.HasOutput("X@GRAD")) context.SetOutput("X@GRAD", x);
  // Bias has Scale's dtype and shape; the gradient op does not read it.
  for (const char* slot : {"Scale@GRAD", "Bias@GRAD"}) {
    if (context.HasOutput(slot)) {
      context.SetOutput(slot, context.Input("Scale"));
    }
  }
  return absl::OkStatus();
}

// With xhat = (x - mean) * inv_std per channel and sums over N and the
// spatial axes: Bias@GRAD = sum(dy), Scale@GRAD = sum(dy * xhat). In
// training the batch statistics depend on X, so
// X@GRAD = scale * inv_std / m * (m * dy - sum(dy) - xhat * sum(dy * xhat))
// over the m values of a channel; in inference X@GRAD = scale * inv_std * dy.
template <typename T>
absl::Status BatchNormGradKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const Layout l = LayoutOf(x);
  const bool is_test = context.attrs().Get<bool>("is_test");
  const double epsilon = context.attrs().Get<float>("epsilon");
  const T* scale = context.Input("Scale").data<T>();
  const T* in = x.data<T>();
  const T* dy = context.Input("Y@GRAD").data<T>();
  T* d_x = nn::OptionalOutputData<T>(context, "X@GRAD");
  T* d_scale = nn::OptionalOutputData<T>(context, "Scale@GRAD");
  T* d_bias = nn::OptionalOutputData<T>(context, "Bias@GRAD");
  const double count = static_cast<double>(l.batch * l.inner);
  for (int64_t c = 0; c < l.channels; ++c) {
    double mean, inv_std;
    if (is_test) {
      mean = context.Input("Mean").data<T>()[c];
      inv_std =
          1.0 / std::sqrt(context.Input("Variance").data<T>()[c] + epsilon);
    } else {
      mean = context.Input("SavedMean").data<T>()[c];
      inv_std = context.Input("SavedVariance").data<T>()[c];
    }
    double dy_sum = 0, dy_xhat_sum = 0;
    for (int64_t n = 0; n < l.batch; ++n) {
      const int64_t offset = (n * l.channels + c) * l.inner;
      for (int64_t i = offset; i < offset + l.inner; ++i) {
        dy_sum += dy[i];
        dy_xhat_sum += dy[i] * (in[i] - mean) * inv_std;
      }
    }
    if (d_scale != nullptr) d_scale[c] = static_cast<T>(dy_xhat_sum);
    if (d_bias != nullptr) d_bias[c] = static_cast<T>(dy_sum);
    if (d_x == nullptr) continue;
    const double a = scale[c] * inv_std;
    for (int64_t n = 0; n < l.batch; ++n) {
      const int64_t offset = (n * l.channels + c) * l.inner;
      for (int64_t i = offset; i < offset + l.inner; ++i) {
        if (is_test) {
          d_x[i] = static_cast<T>(a * dy[i]);
        } else {
          const double xhat = (in[i] - mean) * inv_std;
          d_x[i] = static_cast<T>(
              a * (dy[i] - dy_sum / count - xhat * dy_xhat_sum / count));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

// MeanOut and VarianceOut are normally Mean and Variance themselves,
// persistable variables updated in place each training step.
SF_REGISTER_OP(batch_norm)
    .Input("X")
    .Input("Scale")
    .Input("Bias")
    .Input("Mean")
    .Input("Variance")
    .Output("Y")
    .Output("MeanOut", /*optional=*/true)
    .Output("VarianceOut", /*optional=*/true)
    .Output("SavedMean", /*optional=*/true)
    .Output("SavedVariance", /*optional=*/true)
    .InPlace("MeanOut", "Mean")
    .InPlace("VarianceOut", "Variance")
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Attr("momentum", AttrType::kFloat, AttrValue(0.9f), InRange(0, 1))
    .Attr("is_test", AttrType::kBool, AttrValue(true))
    .Attr("data_format", AttrType::kString, AttrValue(std::string(kNchw)),
          OneOf(ImageFormatNames()))
    .Attr("fuse_relu", AttrType::kBool, AttrValue(false))
    .Infer(InferBatchNorm)
    .Grad(GradSpec("batch_norm_grad")
              .ReadInput("X")
              .ReadInput("Scale")
              .ReadOutputGrad("Y")
              .WriteInputGrad("X")
              .WriteInputGrad("Scale")
              .WriteInputGrad("Bias")
              .Maker(MakeBatchNormGrad))
    .Kernel(DeviceType::kCPU, kFloat32, &BatchNormKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &BatchNormKernel<double>);

// Mean and Variance are read in inference mode, SavedMean and
// SavedVariance in training mode.
SF_REGISTER_OP(batch_norm_grad)
    .Input("X")
    .Input("Scale")
    .Input("Mean", /*optional=*/true)
    .Input("Variance", /*optional=*/true)
    .Input("SavedMean", /*optional=*/true)
    .Input("SavedVariance", /*optional=*/true)
    .Input("Y@GRAD")
    .Output("X@GRAD", /*optional=*/true)
    .Output("Scale@GRAD", /*optional=*/true)
    .Output("Bias@GRAD", /*optional=*/true)
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Attr("momentum", AttrType::kFloat, AttrValue(0.9f), InRange(0, 1))
    .Attr("is_test", AttrType::kBool, AttrValue(true))
    .Infer(InferBatchNormGrad)
    .Kernel(DeviceType::kCPU, kFloat32, &BatchNormGradKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &BatchNormGradKernel<double>);

}  // namespace scopeflow
