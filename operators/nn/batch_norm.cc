// batch_norm in inference mode: normalizes each channel (axis 1) of X with
// given running statistics, then scales and shifts it.
#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr const char* kChannelInputs[] = {"Scale", "Bias", "Mean", "Variance"};

absl::Status InferBatchNorm(InferContext& context) {
  SF_RETURN_IF_ERROR(
      CheckRank(context, "X", 2, std::numeric_limits<int>::max()));
  const VarInfo& x = context.Input("X");
  const int64_t channels = x.has_dims ? x.dims[1] : -1;
  for (const char* slot : kChannelInputs) {
    SF_RETURN_IF_ERROR(CheckRank(context, slot, 1, 1));
    SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", slot));
    const VarInfo& info = context.Input(slot);
    if (!info.has_dims) continue;
    SF_CHECK(channels < 0 || info.dims[0] < 0 || info.dims[0] == channels,
             "input \"%s\" (variable \"%s\") has shape %s: expected [%d], one "
             "value per channel of \"X\" (variable \"%s\", shape %s)",
             slot, context.InputName(slot), DimsToString(info.dims), channels,
             context.InputName("X"), DimsToString(x.dims));
  }
  context.SetOutput("Y", x);
  return absl::OkStatus();
}

// Y = (X - mean) / sqrt(variance + epsilon) * scale + bias, per channel,
// folded into Y = X * a + b.
template <typename T>
absl::Status BatchNormKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& y = *context.Output("Y");
  const double epsilon = context.attrs().Get<float>("epsilon");
  const T* scale = context.Input("Scale").data<T>();
  const T* bias = context.Input("Bias").data<T>();
  const T* mean = context.Input("Mean").data<T>();
  const T* variance = context.Input("Variance").data<T>();
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t inner =
      channels == 0 || batch == 0 ? 0 : x.numel() / (batch * channels);
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t c = 0; c < channels; ++c) {
    const double a = scale[c] / std::sqrt(variance[c] + epsilon);
    const T ta = static_cast<T>(a);
    const T tb = static_cast<T>(bias[c] - mean[c] * a);
    for (int64_t n = 0; n < batch; ++n) {
      const int64_t offset = (n * channels + c) * inner;
      for (int64_t i = offset; i < offset + inner; ++i) {
        out[i] = in[i] * ta + tb;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIsTest(const AttrValue& value) {
  SF_CHECK(std::get<bool>(value),
           "must be true: batch_norm computes only inference (it normalizes "
           "with the given Mean and Variance); training mode is not "
           "available");
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(batch_norm)
    .Input("X")
    .Input("Scale")
    .Input("Bias")
    .Input("Mean")
    .Input("Variance")
    .Output("Y")
    .Attr("epsilon", AttrType::kFloat, AttrValue(1e-5f), NonNegative())
    .Attr("is_test", AttrType::kBool, AttrValue(true), CheckIsTest)
    .Infer(InferBatchNorm)
    .Kernel(DeviceType::kCPU, kFloat32, &BatchNormKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &BatchNormKernel<double>);

}  // namespace scopeflow
