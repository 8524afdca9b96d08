#include "framework/passes/op_fusion.h"

#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "framework/op_def_attrs.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

BlockDef ParseBlock(const std::string& text) {
  BlockDef block;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &block))
      << text;
  return block;
}

std::string Op(const std::string& type, const std::string& inputs,
               const std::string& out, const std::string& attrs = "") {
  return "ops { type: '" + type + "' " + inputs +
         " outputs { slot: 'Out' vars: '" + out + "' } " + attrs + " }\n";
}

std::string In(const std::string& slot, const std::string& var) {
  return "inputs { slot: '" + slot + "' vars: '" + var + "' } ";
}

std::string Matmul(const std::string& x, const std::string& y,
                   const std::string& out, const std::string& attrs = "") {
  return Op("matmul", In("X", x) + In("Y", y), out, attrs);
}

std::string Add(const std::string& x, const std::string& y,
                const std::string& out) {
  return Op("add", In("X", x) + In("Y", y), out);
}

std::string Relu(const std::string& x, const std::string& out) {
  return Op("relu", In("X", x), out);
}

// A layer x [4, 3] -> [4, 2]: w [3, 2], b [2]; the variables a net
// declares, with what inference found of them.
class OpFusionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Declare("x", {4, 3});
    Declare("w", {3, 2}, /*persistable=*/true);
    Declare("b", {2}, /*persistable=*/true);
    for (const char* name : {"product", "sum", "h", "y", "z"}) {
      Declare(name, {4, 2});
    }
  }

  void Declare(const std::string& name, Dims dims, bool persistable = false,
               DataType dtype = kFloat32) {
    vars_ += "vars { name: '" + name +
             "' persistable: " + (persistable ? "true" : "false") + " }\n";
    infos_[name] = VarInfo{dtype, std::move(dims), true};
  }

  std::optional<OpFusion> Fuse(const std::string& ops) {
    return FuseOps(ParseBlock(vars_ + ops), infos_);
  }

  std::string vars_;
  absl::flat_hash_map<std::string, VarInfo> infos_;
};

std::string Attr(const OpDef& op, const std::string& name) {
  const AttrDef* attr = FindAttr(op, name);
  if (attr == nullptr) return "(unset)";
  return attr->has_i() ? std::to_string(attr->i()) : attr->s();
}

std::string Slot(const OpDef& op, bool input, const std::string& slot) {
  for (const OpSlot& bound : input ? op.inputs() : op.outputs()) {
    if (bound.slot() == slot) return bound.vars(0);
  }
  return "(unbound)";
}

TEST_F(OpFusionTest, FusesAProductItsBiasAndARelu) {
  std::optional<OpFusion> fusion =
      Fuse(Matmul("x", "w", "product") + Add("product", "b", "sum") +
           Relu("sum", "h") + Relu("h", "y"));
  ASSERT_TRUE(fusion.has_value());
  ASSERT_EQ(fusion->block.ops_size(), 2);
  const OpDef& fc = fusion->block.ops(0);
  EXPECT_EQ(fc.type(), "fc");
  EXPECT_EQ(Slot(fc, true, "X"), "x");
  EXPECT_EQ(Slot(fc, true, "W"), "w");
  EXPECT_EQ(Slot(fc, true, "Bias"), "b");
  EXPECT_EQ(Slot(fc, false, "Out"), "h");
  EXPECT_EQ(Attr(fc, "in_num_col_dims"), "1");
  EXPECT_EQ(Attr(fc, "activation_type"), "relu");
  // The second relu reads a fused fc's output: fc has its activation.
  EXPECT_EQ(fusion->block.ops(1).type(), "relu");
  EXPECT_THAT(fusion->source_op, ElementsAre(0, 3));
  EXPECT_EQ(fusion->ops_removed, 2);
  // The variables between the fused ops are gone.
  for (const VarDef& var : fusion->block.vars()) {
    EXPECT_NE(var.name(), "product");
    EXPECT_NE(var.name(), "sum");
  }
}

TEST_F(OpFusionTest, TakesTheBiasOnEitherSideOfTheAdd) {
  std::optional<OpFusion> fusion =
      Fuse(Matmul("x", "w", "product") + Add("b", "product", "sum"));
  ASSERT_TRUE(fusion.has_value());
  ASSERT_EQ(fusion->block.ops_size(), 1);
  EXPECT_EQ(Slot(fusion->block.ops(0), true, "Bias"), "b");
  EXPECT_EQ(Attr(fusion->block.ops(0), "activation_type"), "(unset)");
}

TEST_F(OpFusionTest, TakesABiasRowOfRankTwo) {
  Declare("row", {1, 2}, true);
  std::optional<OpFusion> fusion =
      Fuse(Matmul("x", "w", "product") + Add("product", "row", "sum"));
  ASSERT_TRUE(fusion.has_value());
  EXPECT_EQ(Slot(fusion->block.ops(0), true, "Bias"), "row");
}

TEST_F(OpFusionTest, KeepsTheLeadingDimsOfABatchedProduct) {
  Declare("x3", {5, 4, 3});
  Declare("p3", {5, 4, 2});
  Declare("s3", {5, 4, 2});
  std::optional<OpFusion> fusion =
      Fuse(Matmul("x3", "w", "p3") + Add("p3", "b", "s3"));
  ASSERT_TRUE(fusion.has_value());
  EXPECT_EQ(Attr(fusion->block.ops(0), "in_num_col_dims"), "2");
}

TEST_F(OpFusionTest, FusesAnFcAndItsRelu) {
  std::optional<OpFusion> fusion =
      Fuse(Op("fc", In("X", "x") + In("W", "w"), "h") + Relu("h", "y"));
  ASSERT_TRUE(fusion.has_value());
  ASSERT_EQ(fusion->block.ops_size(), 1);
  EXPECT_EQ(Slot(fusion->block.ops(0), false, "Out"), "y");
  EXPECT_EQ(Attr(fusion->block.ops(0), "activation_type"), "relu");
  EXPECT_THAT(fusion->source_op, ElementsAre(0));
}

std::string Gelu(const std::string& x, const std::string& out,
                 bool approximate = false) {
  return Op("gelu", In("X", x), out,
            approximate ? "attrs { name: 'approximate' b: true }" : "");
}

TEST_F(OpFusionTest, FusesAProductItsBiasAndAGelu) {
  for (bool approximate : {false, true}) {
    SCOPED_TRACE(approximate ? "tanh form" : "erf form");
    std::optional<OpFusion> fusion =
        Fuse(Matmul("x", "w", "product") + Add("product", "b", "sum") +
             Gelu("sum", "h", approximate) + Gelu("h", "y"));
    ASSERT_TRUE(fusion.has_value());
    ASSERT_EQ(fusion->block.ops_size(), 2);
    const OpDef& fc = fusion->block.ops(0);
    EXPECT_EQ(fc.type(), "fc");
    EXPECT_EQ(Slot(fc, true, "Bias"), "b");
    EXPECT_EQ(Slot(fc, false, "Out"), "h");
    EXPECT_EQ(Attr(fc, "activation_type"), approximate ? "gelu_tanh" : "gelu");
    // fc has its activation: the second gelu stays.
    EXPECT_EQ(fusion->block.ops(1).type(), "gelu");
    EXPECT_THAT(fusion->source_op, ElementsAre(0, 3));
    EXPECT_EQ(fusion->ops_removed, 2);
  }
}

TEST_F(OpFusionTest, LeavesGelusWhereAsked) {
  std::optional<OpFusion> fusion =
      FuseOps(ParseBlock(vars_ + Matmul("x", "w", "product") +
                         Add("product", "b", "sum") + Gelu("sum", "h")),
              infos_, /*gelu=*/false);
  ASSERT_TRUE(fusion.has_value());
  ASSERT_EQ(fusion->block.ops_size(), 2);
  EXPECT_EQ(Attr(fusion->block.ops(0), "activation_type"), "(unset)");
  EXPECT_EQ(fusion->block.ops(1).type(), "gelu");
}

TEST_F(OpFusionTest, LeavesWhatItCannotFuse) {
  Declare("full", {4, 2}, true);
  Declare("wide", {4, 4});
  Declare("wide_sum", {4, 4});
  Declare("column", {4, 1}, true);
  Declare("ints", {4, 3}, false, kInt32);
  Declare("int_product", {4, 2}, false, kInt32);
  Declare("int_sum", {4, 2}, false, kInt32);
  Declare("kept", {4, 2}, true);
  const std::string fc = Op("fc", In("X", "x") + In("W", "w"), "h");
  const std::string cases[] = {
      // Another op reads the product.
      Matmul("x", "w", "product") + Add("product", "b", "sum") +
          Relu("product", "y"),
      // Transposed, or scaled.
      Matmul("x", "w", "product", "attrs { name: 'transpose_y' b: true }") +
          Add("product", "b", "sum"),
      Matmul("x", "w", "product", "attrs { name: 'alpha' f: 2 }") +
          Add("product", "b", "sum"),
      // Not a bias: a full matrix, a column, the product itself.
      Matmul("x", "w", "product") + Add("product", "full", "sum"),
      Matmul("x", "w", "product") + Add("product", "column", "sum"),
      Matmul("x", "w", "product") + Add("product", "product", "sum"),
      // The add broadcasts the product to a larger shape.
      Matmul("x", "w", "product") + Add("product", "wide", "wide_sum"),
      // Integers: fc has no integer kernels.
      Matmul("ints", "w", "int_product") + Add("int_product", "b", "int_sum"),
      // The product is persistable.
      Matmul("x", "w", "kept") + Add("kept", "b", "sum"),
      // An op between the two writes the product's input.
      Matmul("x", "w", "product") + Relu("z", "x") + Add("product", "b", "sum"),
      // The add writes in place, or another op writes the product too.
      Matmul("x", "w", "product") + Add("product", "b", "product"),
      Matmul("x", "w", "product") + Relu("z", "product") +
          Add("product", "b", "sum"),
      // An fc with an activation already, a relu in place, another reader.
      Op("fc", In("X", "x") + In("W", "w"), "h",
         "attrs { name: 'activation_type' s: 'relu' }") +
          Relu("h", "y"),
      fc + Relu("h", "h"),
      fc + Relu("h", "y") + Relu("h", "z"),
      // A relu that writes the fc's input.
      fc + Relu("h", "x"),
      // The same for a gelu.
      fc + Gelu("h", "h"),
      fc + Gelu("h", "y") + Relu("h", "z"),
      fc + Gelu("h", "x"),
  };
  for (const std::string& ops : cases) {
    EXPECT_FALSE(Fuse(ops).has_value()) << ops;
  }
}

TEST_F(OpFusionTest, LeavesVariablesOfUnknownRank) {
  infos_["x"].has_dims = false;
  EXPECT_FALSE(Fuse(Matmul("x", "w", "product") + Add("product", "b", "sum"))
                   .has_value());
}

}  // namespace
}  // namespace scopeflow
