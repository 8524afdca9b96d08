#include <string>

#include "framework/op_spec.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// Linking //operators/nn:nn registers every op of the folder.
TEST(RegistrationTest, EveryOpIsRegistered) {
  for (const char* type :
       {"conv2d", "pool2d", "batch_norm", "layer_norm", "dropout"}) {
    EXPECT_NE(OpRegistry::Global().Find(type), nullptr) << type;
  }
}

// Each op declares its gradient, and the gradient op it names is
// registered.
TEST(RegistrationTest, EveryOpHasARegisteredGradient) {
  for (const char* type :
       {"conv2d", "pool2d", "batch_norm", "layer_norm", "dropout"}) {
    const OpSpec* spec = OpRegistry::Global().Find(type);
    ASSERT_NE(spec, nullptr) << type;
    ASSERT_NE(spec->grad(), nullptr) << type;
    const std::string grad_type = std::string(type) + "_grad";
    EXPECT_NE(OpRegistry::Global().Find(grad_type), nullptr) << grad_type;
  }
}

}  // namespace
}  // namespace scopeflow
