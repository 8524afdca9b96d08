// Seeded initializers for startup nets: xavier_uniform, xavier_normal
// (Glorot), kaiming_uniform, kaiming_normal (He) and
// truncated_gaussian_random.
//
// As gaussian_random and uniform_random do, each draws from std::mt19937
// seeded by the "seed" attribute through the standard distributions: the
// same seed gives the same tensor on every run, another seed another one.
//
// Fans follow PyTorch's torch.nn.init, adapted to this runtime's weight
// layouts:
//   rank 2, an fc weight W [in, out] (fc computes X [m, in] * W [in, out]):
//     fan_in = dims[0], fan_out = dims[1]. PyTorch's Linear stores
//     [out, in], so the dimensions are the other way round there.
//   rank >= 3, a conv filter [out_c, in_c / groups, k...] as PyTorch's:
//     fan_in = dims[1] * prod(k), fan_out = dims[0] * prod(k).
//   rank < 2: an error, as in PyTorch (biases are filled with constants).
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "framework/op_spec.h"
#include "framework/tensor.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct Fans {
  int64_t in = 0;
  int64_t out = 0;
};

// For a shape of rank >= 2 (checked by inference).
Fans ComputeFans(const std::vector<int64_t>& shape) {
  if (shape.size() == 2) return Fans{shape[0], shape[1]};
  int64_t receptive_field = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive_field *= shape[i];
  return Fans{shape[1] * receptive_field, shape[0] * receptive_field};
}

// Out gets the attributes' shape and dtype, which must be float32 or
// float64.
absl::Status InferInitializer(InferContext& context) {
  const auto& shape = context.attrs().Get<std::vector<int64_t>>("shape");
  const auto dtype =
      static_cast<DataType>(context.attrs().Get<int32_t>("dtype"));
  SF_CHECK(dtype == kFloat32 || dtype == kFloat64,
           "attribute \"dtype\" = %s for output \"Out\" (variable \"%s\"): "
           "expected float32 or float64",
           DataTypeName(dtype), context.OutputName("Out"));
  context.SetOutput("Out", 0, dtype, Dims(shape.begin(), shape.end()));
  return absl::OkStatus();
}

// InferInitializer, and the shape must have fans.
absl::Status InferFanInitializer(InferContext& context) {
  SF_RETURN_IF_ERROR(InferInitializer(context));
  const auto& shape = context.attrs().Get<std::vector<int64_t>>("shape");
  SF_CHECK(shape.size() >= 2,
           "attribute \"shape\" = %s for output \"Out\" (variable \"%s\") has "
           "rank %d: fan_in and fan_out need rank >= 2 (an fc weight [in, "
           "out] or a conv filter [out_c, in_c / groups, k...])",
           DimsToString(shape), context.OutputName("Out"), shape.size());
  return absl::OkStatus();
}

std::mt19937 EngineFor(const KernelContext& context) {
  return std::mt19937(
      static_cast<uint32_t>(context.attrs().Get<int32_t>("seed")));
}

template <typename T, typename Distribution>
void Fill(Tensor* out, std::mt19937& engine, Distribution& dist) {
  T* data = out->data<T>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = dist(engine);
}

// U(-bound, bound).
template <typename T>
void FillUniform(Tensor* out, const KernelContext& context, double bound) {
  std::mt19937 engine = EngineFor(context);
  std::uniform_real_distribution<T> dist(static_cast<T>(-bound),
                                         static_cast<T>(bound));
  Fill<T>(out, engine, dist);
}

// N(0, stddev^2).
template <typename T>
void FillNormal(Tensor* out, const KernelContext& context, double stddev) {
  std::mt19937 engine = EngineFor(context);
  std::normal_distribution<T> dist(T(0), static_cast<T>(stddev));
  Fill<T>(out, engine, dist);
}

// Glorot: std = gain * sqrt(2 / (fan_in + fan_out)).
double XavierStd(const KernelContext& context) {
  const Fans fans =
      ComputeFans(context.attrs().Get<std::vector<int64_t>>("shape"));
  return context.attrs().Get<float>("gain") *
         std::sqrt(2.0 / static_cast<double>(fans.in + fans.out));
}

// He: std = gain / sqrt(fan), gain = sqrt(2 / (1 + negative_slope^2)) (the
// gain of leaky_relu; relu's is sqrt(2)), fan per the "mode" attribute.
double KaimingStd(const KernelContext& context) {
  const Fans fans =
      ComputeFans(context.attrs().Get<std::vector<int64_t>>("shape"));
  const int64_t fan = context.attrs().Get<std::string>("mode") == "fan_out"
                          ? fans.out
                          : fans.in;
  const double slope = context.attrs().Get<float>("negative_slope");
  const double gain = std::sqrt(2.0 / (1.0 + slope * slope));
  return gain / std::sqrt(static_cast<double>(fan));
}

// A uniform distribution of standard deviation `std` spans
// [-sqrt(3) std, sqrt(3) std].
template <typename T>
absl::Status XavierUniform(KernelContext& context) {
  Tensor* out = context.Output("Out");
  // Zero elements: a fan may be 0; there is nothing to draw.
  if (out->numel() == 0) return absl::OkStatus();
  FillUniform<T>(out, context, std::sqrt(3.0) * XavierStd(context));
  return absl::OkStatus();
}

template <typename T>
absl::Status XavierNormal(KernelContext& context) {
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  FillNormal<T>(out, context, XavierStd(context));
  return absl::OkStatus();
}

template <typename T>
absl::Status KaimingUniform(KernelContext& context) {
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  FillUniform<T>(out, context, std::sqrt(3.0) * KaimingStd(context));
  return absl::OkStatus();
}

template <typename T>
absl::Status KaimingNormal(KernelContext& context) {
  Tensor* out = context.Output("Out");
  if (out->numel() == 0) return absl::OkStatus();
  FillNormal<T>(out, context, KaimingStd(context));
  return absl::OkStatus();
}

// N(mean, std^2) restricted to [mean - 2 std, mean + 2 std], as Paddle's
// truncated_gaussian_random and TensorFlow's truncated_normal: a draw
// outside is thrown away and drawn again (about 1 in 22 are).
template <typename T>
absl::Status TruncatedGaussianRandom(KernelContext& context) {
  Tensor* out = context.Output("Out");
  std::mt19937 engine = EngineFor(context);
  const T mean = static_cast<T>(context.attrs().Get<float>("mean"));
  const T stddev = static_cast<T>(context.attrs().Get<float>("std"));
  std::normal_distribution<T> dist(mean, stddev);
  const T limit = 2 * stddev;
  T* data = out->data<T>();
  for (int64_t i = 0; i < out->numel(); ++i) {
    T x = dist(engine);
    while (std::abs(x - mean) > limit) x = dist(engine);
    data[i] = x;
  }
  return absl::OkStatus();
}

}  // namespace

// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
SF_REGISTER_OP(xavier_uniform)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("gain", AttrType::kFloat, AttrValue(1.0f), Positive())
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFanInitializer)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &XavierUniform<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &XavierUniform<double>);

// N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).
SF_REGISTER_OP(xavier_normal)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("gain", AttrType::kFloat, AttrValue(1.0f), Positive())
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFanInitializer)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &XavierNormal<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &XavierNormal<double>);

// U(-b, b), b = gain * sqrt(3 / fan).
SF_REGISTER_OP(kaiming_uniform)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("mode", AttrType::kString, AttrValue(std::string("fan_in")),
          OneOf({"fan_in", "fan_out"}))
    .Attr("negative_slope", AttrType::kFloat, AttrValue(0.0f), NonNegative())
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFanInitializer)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &KaimingUniform<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &KaimingUniform<double>);

// N(0, std^2), std = gain / sqrt(fan).
SF_REGISTER_OP(kaiming_normal)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("mode", AttrType::kString, AttrValue(std::string("fan_in")),
          OneOf({"fan_in", "fan_out"}))
    .Attr("negative_slope", AttrType::kFloat, AttrValue(0.0f), NonNegative())
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFanInitializer)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &KaimingNormal<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &KaimingNormal<double>);

SF_REGISTER_OP(truncated_gaussian_random)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("mean", AttrType::kFloat, AttrValue(0.0f))
    .Attr("std", AttrType::kFloat, AttrValue(1.0f), Positive())
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferInitializer)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &TruncatedGaussianRandom<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &TruncatedGaussianRandom<double>);

}  // namespace scopeflow
