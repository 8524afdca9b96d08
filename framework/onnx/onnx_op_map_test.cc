#include "framework/onnx/onnx_op_map.h"

#include <string>

#include "framework/op_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace onnx_import {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(OnnxOpMapTest, ListsExactlyTheOnnxOpsWithAConverter) {
  EXPECT_EQ(ConvertibleOnnxOps(), OnnxOpsWithConverter());
}

TEST(OnnxOpMapTest, NamesRegisteredOpsOnly) {
  for (const auto& [onnx, ops] : OnnxImportTable()) {
    for (const std::string& op : ops) {
      EXPECT_NE(OpRegistry::Global().Find(op), nullptr)
          << onnx << " imports as \"" << op << "\", which is no op";
    }
  }
}

TEST(OnnxOpMapTest, FindsTheOnnxOpsOfAnOp) {
  EXPECT_THAT(OnnxOpsImportedAs("relu"), ElementsAre("Relu"));
  EXPECT_THAT(OnnxOpsImportedAs("scatter_elements"),
              ElementsAre("Scatter", "ScatterElements"));
  EXPECT_THAT(OnnxOpsImportedAs("relu_grad"), IsEmpty());
}

}  // namespace
}  // namespace onnx_import
}  // namespace scopeflow
