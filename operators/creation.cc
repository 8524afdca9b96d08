// Ops that create tensors: fill_constant, fill_any_like, gaussian_random,
// uniform_random, assign.
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Output "Out" of the dtype and shape the attributes give.
absl::Status InferFromShapeAttr(InferContext& context) {
  const auto& shape = context.attrs().Get<std::vector<int64_t>>("shape");
  const auto dtype =
      static_cast<DataType>(context.attrs().Get<int32_t>("dtype"));
  SF_CHECK(IsValidDataType(dtype), "attribute \"dtype\" = %d is not a dtype",
           static_cast<int>(dtype));
  context.SetOutput("Out", 0, dtype, Dims(shape.begin(), shape.end()));
  return absl::OkStatus();
}

// fill_constant's "value" must be representable in its dtype: converting
// NaN or an out-of-range float to an integer is undefined.
absl::Status InferFillConstant(InferContext& context) {
  SF_RETURN_IF_ERROR(InferFromShapeAttr(context));
  const double value = context.attrs().Get<float>("value");
  double low = 0, high = 0;
  switch (static_cast<DataType>(context.attrs().Get<int32_t>("dtype"))) {
    case DATA_TYPE_INT32:
      low = std::numeric_limits<int32_t>::min();
      high = std::numeric_limits<int32_t>::max();
      break;
    case DATA_TYPE_INT64:
      // The largest float below 2^63.
      low = -9.223372036854775808e18;
      high = 9.2233714e18;
      break;
    default:
      return absl::OkStatus();
  }
  SF_CHECK(low <= value && value <= high,
           "attribute \"value\" = %g does not fit the integer dtype of "
           "output \"Out\" (variable \"%s\")",
           value, context.OutputName("Out"));
  return absl::OkStatus();
}

template <typename T>
absl::Status FillConstant(KernelContext& context) {
  Tensor* out = context.Output("Out");
  const T value = static_cast<T>(context.attrs().Get<float>("value"));
  T* data = out->data<T>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = value;
  return absl::OkStatus();
}

// The random ops draw from std::mt19937 seeded by the "seed" attribute, and
// std::normal_distribution / uniform_real_distribution: the same seed gives
// the same tensor on every run (libstdc++'s distributions are fixed).
absl::Status GaussianRandom(KernelContext& context) {
  Tensor* out = context.Output("Out");
  std::mt19937 engine(
      static_cast<uint32_t>(context.attrs().Get<int32_t>("seed")));
  std::normal_distribution<float> dist(context.attrs().Get<float>("mean"),
                                       context.attrs().Get<float>("std"));
  float* data = out->data<float>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = dist(engine);
  return absl::OkStatus();
}

absl::Status UniformRandom(KernelContext& context) {
  Tensor* out = context.Output("Out");
  const float low = context.attrs().Get<float>("min");
  const float high = context.attrs().Get<float>("max");
  SF_CHECK(low < high, "attribute \"min\" (%g) must be below \"max\" (%g)", low,
           high);
  std::mt19937 engine(
      static_cast<uint32_t>(context.attrs().Get<int32_t>("seed")));
  std::uniform_real_distribution<float> dist(low, high);
  float* data = out->data<float>();
  for (int64_t i = 0; i < out->numel(); ++i) data[i] = dist(engine);
  return absl::OkStatus();
}

absl::Status Assign(KernelContext& context) {
  // A deep copy: later writes to Out never show in X.
  const Tensor& x = context.Input("X");
  Tensor* out = context.Output("Out");
  std::memcpy(out->raw_data(), x.raw_data(), x.nbytes());
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(fill_constant)
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("value", AttrType::kFloat, AttrValue(0.0f))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFillConstant)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &FillConstant<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &FillConstant<double>)
    .Kernel(DeviceType::kCPU, kInt32, &FillConstant<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &FillConstant<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &FillConstant<bool>);

// Out = `value` in every element, with X's shape and dtype; backward seeds
// a loss's gradient with it.
SF_REGISTER_OP(fill_any_like)
    .Input("X")
    .Output("Out")
    .Attr("value", AttrType::kFloat, AttrValue(0.0f))
    .Infer(SameAsInput())
    .Kernel(DeviceType::kCPU, kFloat32, &FillConstant<float>)
    .Kernel(DeviceType::kCPU, kFloat64, &FillConstant<double>)
    .Kernel(DeviceType::kCPU, kInt32, &FillConstant<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &FillConstant<int64_t>)
    .Kernel(DeviceType::kCPU, kBool, &FillConstant<bool>);

SF_REGISTER_OP(gaussian_random)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("mean", AttrType::kFloat, AttrValue(0.0f))
    .Attr("std", AttrType::kFloat, AttrValue(1.0f), Positive())
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFromShapeAttr)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &GaussianRandom);

SF_REGISTER_OP(uniform_random)
    .Random()
    .Output("Out")
    .Attr("shape", AttrType::kInt64s, NonNegative())
    .Attr("min", AttrType::kFloat, AttrValue(-1.0f))
    .Attr("max", AttrType::kFloat, AttrValue(1.0f))
    .Attr("seed", AttrType::kInt, AttrValue(0))
    .Attr("dtype", AttrType::kInt, AttrValue(static_cast<int32_t>(kFloat32)))
    .Infer(InferFromShapeAttr)
    .KernelDtypeFromOutput("Out")
    .Kernel(DeviceType::kCPU, kFloat32, &UniformRandom);

// The gradient of a copy is a copy of the gradient.
absl::Status MakeAssignGrad(GradOpContext& grad) {
  OpDef& op = grad.AddOp("assign");
  GradOpContext::SetInput(op, "X", grad.OutputGrad("Out"));
  GradOpContext::SetOutput(op, "Out", grad.InputGrad("X"));
  return absl::OkStatus();
}

SF_REGISTER_OP(assign)
    .Input("X")
    .Output("Out")
    .Infer(SameAsInput())
    .Grad(GradSpec().ReadOutputGrad("Out").WriteInputGrad("X").Maker(
        MakeAssignGrad))
    .Kernels(DeviceType::kCPU, AllTypes(), [](auto) { return &Assign; });

}  // namespace scopeflow
