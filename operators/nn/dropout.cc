// dropout: zeroes each element of X with probability dropout_prob during
// training; at inference passes X through (or scales it, for
// downgrade_in_infer).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <variant>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status CheckProbability(const AttrValue& value) {
  const float p = std::get<float>(value);
  SF_CHECK(p >= 0.0f && p < 1.0f, "must be in [0, 1), got %g", p);
  return absl::OkStatus();
}

absl::Status InferDropout(InferContext& context) {
  const VarInfo& x = context.Input("X");
  context.SetOutput("Out", x);
  if (context.HasOutput("Mask")) {
    context.SetOutput("Mask", VarInfo{kUInt8, x.dims, x.has_dims});
  }
  return absl::OkStatus();
}

// Training draws one number per element from std::mt19937 seeded by "seed"
// and std::uniform_real_distribution: the same seed gives the same mask on
// every run. An element is kept (mask 1) if its draw is at least
// dropout_prob.
template <typename T>
absl::Status DropoutKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  Tensor& out = *context.Output("Out");
  uint8_t* mask = context.HasOutput("Mask")
                      ? context.Output("Mask")->data<uint8_t>()
                      : nullptr;
  const float p = context.attrs().Get<float>("dropout_prob");
  const bool upscale = context.attrs().Get<std::string>(
                           "dropout_implementation") == "upscale_in_train";
  const T* in = x.data<T>();
  T* o = out.data<T>();
  const int64_t n = x.numel();
  if (context.attrs().Get<bool>("is_test")) {
    const T scale = upscale ? T{1} : static_cast<T>(1.0 - p);
    for (int64_t i = 0; i < n; ++i) o[i] = in[i] * scale;
    if (mask != nullptr) std::fill(mask, mask + n, uint8_t{1});
    return absl::OkStatus();
  }
  const T scale = upscale ? static_cast<T>(1.0 / (1.0 - p)) : T{1};
  std::mt19937 engine(
      static_cast<uint32_t>(context.attrs().Get<int32_t>("seed")));
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = uniform(engine) >= p;
    o[i] = keep ? in[i] * scale : T{0};
    if (mask != nullptr) mask[i] = keep ? 1 : 0;
  }
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(dropout)
    .Input("X")
    .Output("Out")
    .Output("Mask", /*optional=*/true)
    .Attr("dropout_prob", AttrType::kFloat, AttrValue(0.5f), CheckProbability)
    .Attr("is_test", AttrType::kBool, AttrValue(false))
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dropout_implementation", AttrType::kString,
          AttrValue(std::string("upscale_in_train")),
          OneOf({"upscale_in_train", "downgrade_in_infer"}))
    .Infer(InferDropout)
    .Kernel(DeviceType::kCPU, kFloat32, &DropoutKernel<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &DropoutKernel<double>);

}  // namespace scopeflow
