// Every operator the runtime promises is registered once linked, with
// shape inference and a CPU kernel (static registrars survive linking
// because operator libraries are alwayslink).
#include <string>

#include "framework/op_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

constexpr const char* kPromisedOps[] = {
    // elementwise
    "add", "sub", "mul", "div", "pow", "max", "min", "scale", "exp", "log",
    "sqrt", "abs", "neg", "clip", "erf", "sin", "cos", "equal", "less",
    "greater", "where", "cast",
    // activations
    "relu", "leaky_relu", "elu", "sigmoid", "tanh", "gelu", "softmax",
    "log_softmax",
    // linear algebra
    "matmul", "fc",
    // convolution, pooling, normalisation
    "conv2d", "pool2d", "batch_norm", "layer_norm",
    // shape
    "reshape", "transpose", "concat", "split", "slice", "gather", "flatten",
    "squeeze", "unsqueeze", "expand", "tile", "pad", "shape",
    // reductions
    "reduce_sum", "reduce_mean", "reduce_max", "argmax",
    // creation
    "fill_constant", "gaussian_random", "uniform_random", "assign",
    // losses, metrics, regularisation
    "softmax_with_cross_entropy", "mean", "accuracy", "dropout"};

TEST(RegistryTest, EveryPromisedOpIsRegisteredWithInferenceAndACpuKernel) {
  for (const char* type : kPromisedOps) {
    const OpSpec* spec = OpRegistry::Global().Find(type);
    ASSERT_NE(spec, nullptr) << type << " is not registered";
    EXPECT_NE(spec->infer(), nullptr) << type << " has no shape inference";
    EXPECT_NE(spec->KernelDtypes(DeviceType::kCPU), "none")
        << type << " has no CPU kernel";
  }
  EXPECT_GE(OpRegistry::Global().Types().size(), std::size(kPromisedOps));
}

TEST(RegistryTest, UnknownTypesAreNotFound) {
  EXPECT_EQ(OpRegistry::Global().Find("no_such_op"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find(""), nullptr);
}

}  // namespace
}  // namespace scopeflow
