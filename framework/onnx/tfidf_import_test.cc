// Importing TfIdfVectorizer: integer pools run, string pools are refused as
// something scopeflow lacks.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using onnx_testing::AddInput;
using onnx_testing::AddNode;
using onnx_testing::AddOutput;
using onnx_testing::MakeTensor;
using onnx_testing::Model;
using onnx_testing::OpTypes;
using onnx_testing::RunNet;
using onnx_testing::SetFloats;
using onnx_testing::SetInt;
using onnx_testing::SetInts;
using onnx_testing::SetString;
using onnx_testing::Values;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Unigrams 7 and 8 at positions 1 and 0.
onnx::NodeProto* AddVectorizer(onnx::ModelProto& model) {
  onnx::NodeProto* node = AddNode(model, "TfIdfVectorizer", {"x"}, {"y"});
  SetInt(node, "min_gram_length", 1);
  SetInt(node, "max_gram_length", 1);
  SetInt(node, "max_skip_count", 0);
  SetString(node, "mode", "TFIDF");
  SetInts(node, "ngram_counts", {0});
  SetInts(node, "ngram_indexes", {1, 0});
  return node;
}

TEST(TfIdfImportTest, IntegerPool) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "x", {5}, onnx::TensorProto::INT64);
  onnx::NodeProto* node = AddVectorizer(model);
  SetInts(node, "pool_int64s", {7, 8});
  SetFloats(node, "weights", {0.5, 0.25});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(OpTypes(*imported), ElementsAre("tfidf_vectorizer"));
  // 7 three times (position 1, weight 0.25), 8 once (position 0, 0.5).
  auto out =
      RunNet(*imported, {{"x", MakeTensor<int64_t>({5}, {7, 8, 7, 1, 7})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5, 0.75));
}

TEST(TfIdfImportTest, StringPoolIsUnsupported) {
  onnx::ModelProto model = Model(9);
  AddInput(model, "x", {5}, onnx::TensorProto::INT64);
  onnx::NodeProto* node = AddVectorizer(model);
  onnx::AttributeProto* pool = node->add_attribute();
  pool->set_name("pool_strings");
  pool->set_type(onnx::AttributeProto::STRINGS);
  pool->add_strings("a");
  pool->add_strings("b");
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("TfIdfVectorizer with pool_strings: scopeflow has no "
                        "string tensors"));
}

}  // namespace
}  // namespace scopeflow
