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

}  // namespace
}  // namespace scopeflow
