// Every operator of the operators issue, and its gradient, has a CUDA
// kernel in a build with GPU code. Runs without a device: kernels are
// registered whether or not one is present.
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "framework/data_type.h"
#include "framework/op_spec.h"
#include "gtest/gtest.h"
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

// The ops with float32 kernels (dtype of the slot that picks the kernel).
const std::vector<std::string>& Float32Ops() {
  static const std::vector<std::string> ops = {
      // elementwise
      "add", "sub", "mul", "div", "pow", "max", "min", "scale", "exp", "log",
      "sqrt", "abs", "neg", "clip", "erf", "sin", "cos", "equal", "less",
      "greater", "less_equal", "greater_equal", "where", "cast",
      // activations
      "relu", "leaky_relu", "elu", "sigmoid", "tanh", "gelu", "softmax",
      "log_softmax",
      // linear algebra, convolution, pooling, normalisation
      "matmul", "fc", "conv2d", "pool2d", "batch_norm", "layer_norm",
      // shape
      "reshape", "transpose", "concat", "split", "slice", "gather", "flatten",
      "squeeze", "unsqueeze", "expand", "tile", "pad", "shape",
      // reductions
      "reduce_sum", "reduce_mean", "reduce_max", "argmax",
      // creation
      "fill_constant", "gaussian_random", "uniform_random", "assign",
      "fill_any_like",
      // losses, metrics, dropout, optimizers
      "softmax_with_cross_entropy", "mean", "accuracy", "dropout", "sum", "sgd",
      "momentum", "adam"};
  return ops;
}

TEST(RegistryCudaTest, EveryOpAndItsGradientHasACudaKernel) {
  if (!BuiltWithCuda()) GTEST_SKIP() << "a build without GPU code";
  const OpRegistry& registry = OpRegistry::Global();
  for (const std::string& type : Float32Ops()) {
    const OpSpec* spec = registry.Find(type);
    ASSERT_NE(spec, nullptr) << type;
    EXPECT_NE(spec->FindKernel({DeviceType::kCUDA, kFloat32}), nullptr)
        << type << " has no float32 CUDA kernel (CUDA dtypes: "
        << spec->KernelDtypes(DeviceType::kCUDA) << ")";
    const std::string grad = type + "_grad";
    if (const OpSpec* grad_spec = registry.Find(grad)) {
      EXPECT_NE(grad_spec->FindKernel({DeviceType::kCUDA, kFloat32}), nullptr)
          << grad << " has no float32 CUDA kernel";
    }
  }
}

// `dtypes` (KernelDtypes' list) with only the dtypes the GPU computes in:
// float32, float64, int32, int64 and bool. The others are CPU-only: int8
// and uint8 because quantized models run on the CPU, where their ops
// (qlinear_conv, qlinear_matmul, ...) are; int16, the unsigned integers,
// float16 and bfloat16 because imported models carry them in index, mask
// and storage tensors that the CPU computes on (float16 through float32).
// Bool reduce_max ("any" of a mask, as ONNX ReduceMax allows) is CPU-only
// too.
std::string WithoutCpuOnlyDtypes(const std::string& type,
                                 const std::string& dtypes) {
  static const absl::flat_hash_set<absl::string_view> kGpuDtypes = {
      "float32", "float64", "int32", "int64", "bool"};
  std::vector<std::string> kept;
  for (absl::string_view dtype : absl::StrSplit(dtypes, ", ")) {
    if (type == "reduce_max" && dtype == "bool") continue;
    if (kGpuDtypes.contains(dtype)) kept.emplace_back(dtype);
  }
  return absl::StrJoin(kept, ", ");
}

TEST(RegistryCudaTest, CudaKernelsCoverTheCpuDtypes) {
  if (!BuiltWithCuda()) GTEST_SKIP() << "a build without GPU code";
  for (const std::string& type : Float32Ops()) {
    const OpSpec* spec = OpRegistry::Global().Find(type);
    ASSERT_NE(spec, nullptr) << type;
    EXPECT_EQ(WithoutCpuOnlyDtypes(type, spec->KernelDtypes(DeviceType::kCUDA)),
              WithoutCpuOnlyDtypes(type, spec->KernelDtypes(DeviceType::kCPU)))
        << type;
  }
}

}  // namespace
}  // namespace scopeflow
