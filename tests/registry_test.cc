// Every operator the runtime promises is registered once linked, with
// shape inference and a CPU kernel (static registrars survive linking
// because operator libraries are alwayslink).
#include <algorithm>
#include <iterator>
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
    "greater", "less_equal", "greater_equal", "where", "cast",
    // activations
    "relu", "leaky_relu", "elu", "sigmoid", "tanh", "gelu", "softmax",
    "log_softmax",
    // linear algebra
    "matmul", "fc",
    // convolution, pooling, normalisation
    "conv2d", "pool1d", "pool2d", "pool3d", "batch_norm", "layer_norm",
    // shape
    "reshape", "transpose", "concat", "split", "slice", "gather", "flatten",
    "squeeze", "unsqueeze", "expand", "tile", "pad", "shape",
    // indexing
    "gather_elements", "scatter_elements", "gather_nd", "scatter_nd", "top_k",
    "non_zero",
    // reductions
    "reduce_sum", "reduce_mean", "reduce_max", "argmax",
    // creation
    "fill_constant", "gaussian_random", "uniform_random", "assign",
    // losses, metrics, regularisation
    "softmax_with_cross_entropy", "mean", "accuracy", "dropout",
    // training: optimizers, clipping, schedules, initializers
    "sum", "fill_any_like", "sgd", "momentum", "adam", "clip_by_global_norm",
    "lr_schedule", "increment", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "truncated_gaussian_random"};

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

// Ops with no gradient in mathematics (comparisons, indices, random
// draws, constants, metrics) or that training never differentiates.
constexpr const char* kNotDifferentiable[] = {
    "equal", "less", "greater", "less_equal", "greater_equal", "argmax",
    "shape", "fill_constant", "fill_any_like", "gaussian_random",
    "uniform_random", "accuracy", "non_zero",
    // optimizer steps, schedules and initializers update state in place
    "sgd", "momentum", "adam", "clip_by_global_norm", "lr_schedule",
    "increment", "xavier_uniform", "xavier_normal", "kaiming_uniform",
    "kaiming_normal", "truncated_gaussian_random"};

TEST(RegistryTest, EveryDifferentiablePromisedOpHasAGradient) {
  for (const char* type : kPromisedOps) {
    if (std::find(std::begin(kNotDifferentiable), std::end(kNotDifferentiable),
                  std::string(type)) != std::end(kNotDifferentiable)) {
      continue;
    }
    const OpSpec* spec = OpRegistry::Global().Find(type);
    ASSERT_NE(spec, nullptr) << type;
    EXPECT_NE(spec->grad(), nullptr) << type << " has no gradient";
  }
}

// A GradSpec that names a gradient op names a registered one, whose slots
// are those the default maker binds.
TEST(RegistryTest, GradientOpsExistWithTheSlotsTheirMakersBind) {
  for (const std::string& type : OpRegistry::Global().Types()) {
    const OpSpec* spec = OpRegistry::Global().Find(type);
    const GradSpec* grad = spec->grad();
    if (grad == nullptr || grad->grad_type().empty()) continue;
    const OpSpec* grad_op = OpRegistry::Global().Find(grad->grad_type());
    ASSERT_NE(grad_op, nullptr)
        << type << "'s gradient op " << grad->grad_type() << " is missing";
    EXPECT_NE(grad_op->KernelDtypes(DeviceType::kCPU), "none")
        << grad->grad_type();
    // The default maker copies every forward attribute (a maker of its own,
    // conv2d's, sets those its op takes).
    for (const AttrSpec& attr :
         grad->has_maker() ? std::vector<AttrSpec>() : spec->attrs()) {
      const AttrSpec* copied = grad_op->FindAttr(attr.name);
      ASSERT_NE(copied, nullptr)
          << grad->grad_type() << " lacks attribute " << attr.name;
      EXPECT_EQ(copied->type, attr.type)
          << grad->grad_type() << " " << attr.name;
    }
    for (const auto* slots : {&grad->read_inputs(), &grad->read_outputs()}) {
      for (const std::string& slot : *slots) {
        EXPECT_GE(grad_op->InputIndex(slot), 0)
            << grad->grad_type() << " lacks input " << slot;
      }
    }
    for (const std::string& slot : grad->output_grads()) {
      EXPECT_GE(grad_op->InputIndex(GradName(slot)), 0)
          << grad->grad_type() << " lacks input " << GradName(slot);
    }
    for (const std::string& slot : grad->input_grads()) {
      const int index = grad_op->OutputIndex(GradName(slot));
      ASSERT_GE(index, 0) << grad->grad_type() << " lacks output "
                          << GradName(slot);
      EXPECT_TRUE(grad_op->outputs()[index].optional)
          << grad->grad_type() << "'s output " << GradName(slot)
          << " must be optional: unwanted gradients are not bound";
    }
  }
}

TEST(RegistryTest, UnknownTypesAreNotFound) {
  EXPECT_EQ(OpRegistry::Global().Find("no_such_op"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find(""), nullptr);
}

}  // namespace
}  // namespace scopeflow
