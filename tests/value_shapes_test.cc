// Ops whose output shapes depend on input values (a reshape's target shape
// fed or computed as a tensor): Prepare leaves those dims unknown and keeps
// the rank where it knows it, the executor infers such ops again at every
// run (InferContext::InputValue then holds the values), and one prepared
// net serves values that change from run to run.
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"test\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

// x [2, 3, 4] reshaped to the fed int64 `shape` (declared with
// `shape_dims`), then relu; and the same x reshaped by an attribute, for
// contrast.
std::string ReshapeNet(const std::string& shape_dims) {
  return R"pb(
           blocks { vars {
             name: "x"
             dtype: DATA_TYPE_FLOAT32
             shape: [ 2, 3, 4 ]
           }
                    vars { name: "shape" dtype: DATA_TYPE_INT64 shape:)pb" +
         shape_dims + R"pb(
    }
    ops {
        type: "reshape"
        inputs { slot: "X" vars: "x" }
        inputs { slot: "Shape" vars: "shape" }
        outputs { slot: "Out" vars: "y" }
      }
      ops {
        type: "relu"
        inputs { slot: "X" vars: "y" }
        outputs { slot: "Out" vars: "z" }
      }
      ops {
        type: "reshape"
        inputs { slot: "X" vars: "x" }
        outputs { slot: "Out" vars: "flat" }
        attrs {
          name: "shape"
          i64s { values: [ 24 ] }
        }
      }
    })pb";
}

Tensor Iota24() {
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i - 12);
  return MakeTensor<float>({2, 3, 4}, values);
}

const VarInfo& InfoOf(const PreparedNet& net, const std::string& name) {
  return net.var_infos()[net.VarIndex(name)];
}

TEST(ValueShapesTest, PrepareKeepsTheRankAndInfersAgainAtRunTime) {
  const Executor executor;
  auto prepared = executor.Prepare(Net(ReshapeNet("[ 2 ]")), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // The shape's length is the rank; its values come at run time.
  EXPECT_TRUE(InfoOf(*prepared, "y").has_dims);
  EXPECT_THAT(InfoOf(*prepared, "y").dims, ElementsAre(-1, -1));
  EXPECT_THAT(InfoOf(*prepared, "z").dims, ElementsAre(-1, -1));
  EXPECT_THAT(InfoOf(*prepared, "flat").dims, ElementsAre(24));
  // Both ops after the fed shape infer at every run; the attribute's
  // reshape does not need to.
  ASSERT_EQ(prepared->ops().size(), 3u);
  EXPECT_FALSE(prepared->ops()[0].static_shapes);
  EXPECT_FALSE(prepared->ops()[1].static_shapes);
  EXPECT_TRUE(prepared->ops()[2].static_shapes);

  Scope scope;
  auto out = executor.Run(
      *prepared, scope,
      {{"x", Iota24()}, {"shape", MakeTensor<int64_t>({2}, {4, 6})}},
      {"y", "z"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4, 6));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(4, 6));
  EXPECT_EQ(Values<float>((*out)[0])[23], 11);
  EXPECT_EQ(Values<float>((*out)[1])[0], 0);    // relu(-12)
  EXPECT_EQ(Values<float>((*out)[1])[23], 11);  // relu(11)
}

TEST(ValueShapesTest, ShapesChangeBetweenRunsOfOnePreparedNet) {
  const Executor executor;
  auto prepared = executor.Prepare(Net(ReshapeNet("[ 2 ]")), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  auto run = [&](std::vector<int64_t> shape) {
    return executor.Run(
        *prepared, scope,
        {{"x", Iota24()}, {"shape", MakeTensor<int64_t>({2}, shape)}}, {"z"});
  };
  const std::vector<std::pair<std::vector<int64_t>, Dims>> cases = {
      {{6, 4}, {6, 4}},
      {{-1, 2}, {12, 2}},
      {{0, -1}, {2, 12}},
      {{24, 1}, {24, 1}}};
  for (const auto& [shape, dims] : cases) {
    auto out = run(shape);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims(), dims);
  }
  // A bad value fails that run only, naming the op and the variable.
  auto bad = run({5, 5});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("op 0 (reshape): cannot reshape input \"X\" (variable "
                        "\"x\") of shape [2, 3, 4] (24 elements) to [5, 5] (25 "
                        "elements)"));
  auto again = run({3, 8});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT((*again)[0].dims(), ElementsAre(3, 8));
}

TEST(ValueShapesTest, ShapeOfUnknownLengthLeavesTheRankUnknown) {
  const Executor executor;
  auto prepared = executor.Prepare(Net(ReshapeNet("[ -1 ]")), 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(InfoOf(*prepared, "y").has_dims);
  Scope scope;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{24}, std::vector<int64_t>{2, 2, 6},
        std::vector<int64_t>{1, 2, 1, 12}}) {
    auto out = executor.Run(
        *prepared, scope,
        {{"x", Iota24()},
         {"shape",
          MakeTensor<int64_t>({static_cast<int64_t>(shape.size())}, shape)}},
        {"z"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims(), Dims(shape.begin(), shape.end()));
  }
}

// The values may come from an op of the net: here the dims of another fed
// tensor, whose shape changes between runs.
TEST(ValueShapesTest, ShapeComputedByTheNet) {
  const Executor executor;
  auto prepared = executor.Prepare(Net(R"pb(
                                     blocks {
                                       vars {
                                         name: "x"
                                         dtype: DATA_TYPE_FLOAT32
                                         shape: [ 2, 3, 4 ]
                                       }
                                       vars {
                                         name: "like"
                                         dtype: DATA_TYPE_FLOAT32
                                         shape: [ -1, -1 ]
                                       }
                                       ops {
                                         type: "shape"
                                         inputs { slot: "X" vars: "like" }
                                         outputs { slot: "Out" vars: "dims" }
                                       }
                                       ops {
                                         type: "reshape"
                                         inputs { slot: "X" vars: "x" }
                                         inputs { slot: "Shape" vars: "dims" }
                                         outputs { slot: "Out" vars: "y" }
                                       }
                                     })pb"),
                                   0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(InfoOf(*prepared, "y").dims, ElementsAre(-1, -1));
  Scope scope;
  for (const Dims& dims : {Dims{8, 3}, Dims{1, 24}}) {
    auto out = executor.Run(
        *prepared, scope,
        {{"x", Iota24()},
         {"like", MakeTensor<float>(dims, std::vector<float>(24))}},
        {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims(), dims);
    // A view of x: the elements in their order.
    EXPECT_EQ(Values<float>((*out)[0])[5], -7);
  }
}

}  // namespace
}  // namespace scopeflow
