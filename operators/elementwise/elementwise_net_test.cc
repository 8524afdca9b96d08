// Elementwise ops in nets: declared shapes with unknown dimensions or rank
// (inference at Prepare, then again at Run), chains, outputs written in
// place.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A net of one block from the text of its vars and ops.
NetDef MakeNet(const std::string& block_text) {
  NetDef net;
  const std::string text =
      "format_version: 1 name: \"test\" blocks { " + block_text + " }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  return net;
}

absl::StatusOr<PreparedNet> Prepare(const NetDef& net) {
  return Executor().Prepare(net, 0, CPUPlace());
}

absl::StatusOr<std::vector<Tensor>> RunNet(
    const PreparedNet& prepared, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches) {
  Scope scope;
  return Executor().Run(prepared, scope, feeds, fetches);
}

const VarInfo& InfoOf(const PreparedNet& prepared, const std::string& name) {
  return prepared.var_infos()[prepared.VarIndex(name)];
}

// x [-1, 3] + y [3], then a comparison, a where, a cast and a scale.
constexpr char kChain[] = R"pb(
  vars {
    name: "x"
    dtype: DATA_TYPE_FLOAT32
    shape: [ -1, 3 ]
  }
  vars {
    name: "y"
    dtype: DATA_TYPE_FLOAT32
    shape: [ 3 ]
  }
  ops {
    type: "add"
    inputs { slot: "X" vars: "x" }
    inputs { slot: "Y" vars: "y" }
    outputs { slot: "Out" vars: "sum" }
  }
  ops {
    type: "less"
    inputs { slot: "X" vars: "sum" }
    inputs { slot: "Y" vars: "y" }
    outputs { slot: "Out" vars: "mask" }
  }
  ops {
    type: "where"
    inputs { slot: "Condition" vars: "mask" }
    inputs { slot: "X" vars: "sum" }
    inputs { slot: "Y" vars: "y" }
    outputs { slot: "Out" vars: "picked" }
  }
  ops {
    type: "cast"
    inputs { slot: "X" vars: "picked" }
    outputs { slot: "Out" vars: "ints" }
    attrs { name: "out_dtype" i: 4 }
  }
  ops {
    type: "scale"
    inputs { slot: "X" vars: "ints" }
    outputs { slot: "Out" vars: "scaled" }
    attrs { name: "scale" f: 10 }
  })pb";

TEST(ElementwiseNetTest, UnknownDimensionsAtPrepare) {
  absl::StatusOr<PreparedNet> prepared = Prepare(MakeNet(kChain));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  for (const std::string name : {"sum", "mask", "picked", "ints", "scaled"}) {
    SCOPED_TRACE(name);
    const VarInfo& info = InfoOf(*prepared, name);
    EXPECT_TRUE(info.has_dims);
    EXPECT_THAT(info.dims, ElementsAre(-1, 3));
  }
  EXPECT_EQ(InfoOf(*prepared, "sum").dtype, kFloat32);
  EXPECT_EQ(InfoOf(*prepared, "mask").dtype, kBool);
  EXPECT_EQ(InfoOf(*prepared, "picked").dtype, kFloat32);
  EXPECT_EQ(InfoOf(*prepared, "ints").dtype, kInt32);
  EXPECT_EQ(InfoOf(*prepared, "scaled").dtype, kInt32);

  auto out = RunNet(*prepared,
                    {{"x", MakeTensor<float>({2, 3}, {-1, 0.5f, -3, 1, 2, -9})},
                     {"y", MakeTensor<float>({3}, {2, 1, 4})}},
                    {"sum", "mask", "scaled"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 1.5f, 1, 3, 3, -5));
  EXPECT_THAT(Values<bool>((*out)[1]),
              ElementsAre(true, false, true, false, false, true));
  // where: sum if sum < y else y; cast truncates; scale by 10.
  EXPECT_THAT(Values<int32_t>((*out)[2]), ElementsAre(10, 10, 10, 20, 10, -50));
}

TEST(ElementwiseNetTest, UnknownRankAtPrepare) {
  absl::StatusOr<PreparedNet> prepared = Prepare(MakeNet(R"pb(
    vars { name: "x" dtype: DATA_TYPE_FLOAT64 }
    vars {
      name: "y"
      dtype: DATA_TYPE_FLOAT64
      shape: [ 2, 1 ]
    }
    ops {
      type: "mul"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "y" }
      outputs { slot: "Out" vars: "product" }
    }
    ops {
      type: "sqrt"
      inputs { slot: "X" vars: "product" }
      outputs { slot: "Out" vars: "root" }
    }
    ops {
      type: "clip"
      inputs { slot: "X" vars: "root" }
      outputs { slot: "Out" vars: "clipped" }
      attrs { name: "min" f: 0 }
      attrs { name: "max" f: 5 }
    })pb"));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(InfoOf(*prepared, "product").has_dims);
  EXPECT_EQ(InfoOf(*prepared, "product").dtype, kFloat64);
  EXPECT_FALSE(InfoOf(*prepared, "clipped").has_dims);

  auto out = RunNet(*prepared,
                    {{"x", MakeTensor<double>({3}, {1, 4, 9})},
                     {"y", MakeTensor<double>({2, 1}, {1, 16})}},
                    {"clipped"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<double>((*out)[0]), ElementsAre(1, 2, 3, 4, 5, 5));
}

TEST(ElementwiseNetTest, ShapesCheckedAgainAtRun) {
  absl::StatusOr<PreparedNet> prepared = Prepare(MakeNet(R"pb(
    vars {
      name: "x"
      dtype: DATA_TYPE_INT64
      shape: [ -1, 3 ]
    }
    vars {
      name: "y"
      dtype: DATA_TYPE_INT64
      shape: [ -1, 3 ]
    }
    ops {
      type: "sub"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "y" }
      outputs { slot: "Out" vars: "diff" }
    })pb"));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(InfoOf(*prepared, "diff").dims, ElementsAre(-1, 3));
  // 1 and 2 rows broadcast...
  auto ok = RunNet(*prepared,
                   {{"x", MakeTensor<int64_t>({1, 3}, {10, 20, 30})},
                    {"y", MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})}},
                   {"diff"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(Values<int64_t>((*ok)[0]), ElementsAre(9, 18, 27, 6, 15, 24));
  // ...2 and 4 do not.
  auto bad = RunNet(*prepared,
                    {{"x", MakeTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})},
                     {"y", MakeTensor<int64_t>({4, 3}, {})}},
                    {"diff"});
  EXPECT_THAT(bad.status().message(),
              HasSubstr("op 0 (sub): inputs \"X\" (variable \"x\", shape "
                        "[2, 3]), \"Y\" (variable \"y\", shape [4, 3]) do not "
                        "broadcast together"));
}

TEST(ElementwiseNetTest, KnownDimensionsCheckedAtPrepare) {
  absl::Status status = Prepare(MakeNet(R"pb(
                          vars {
                            name: "x"
                            dtype: DATA_TYPE_FLOAT32
                            shape: [ -1, 3 ]
                          }
                          vars {
                            name: "y"
                            dtype: DATA_TYPE_FLOAT32
                            shape: [ -1, 4 ]
                          }
                          ops {
                            type: "add"
                            inputs { slot: "X" vars: "x" }
                            inputs { slot: "Y" vars: "y" }
                            outputs { slot: "Out" vars: "sum" }
                          })pb"))
                            .status();
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (add): inputs \"X\" (variable \"x\", shape "
                        "[-1, 3]), \"Y\" (variable \"y\", shape [-1, 4]) do "
                        "not broadcast together"));
}

TEST(ElementwiseNetTest, ChainOfTemporaries) {
  // sum = x + y; square = sum * sum; out = neg(square), each output freed
  // or reused by the executor as it goes.
  absl::StatusOr<PreparedNet> prepared = Prepare(MakeNet(R"pb(
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2, 2 ]
    }
    vars {
      name: "y"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 2 ]
    }
    ops {
      type: "add"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "y" }
      outputs { slot: "Out" vars: "sum" }
    }
    ops {
      type: "mul"
      inputs { slot: "X" vars: "sum" }
      inputs { slot: "Y" vars: "sum" }
      outputs { slot: "Out" vars: "square" }
    }
    ops {
      type: "neg"
      inputs { slot: "X" vars: "square" }
      outputs { slot: "Out" vars: "out" }
    })pb"));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  auto out = RunNet(
      *prepared, {{"x", x}, {"y", MakeTensor<float>({2}, {1, -1})}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(-4, -1, -16, -9));
  EXPECT_THAT(Values<float>(x), ElementsAre(1, 2, 3, 4));  // Feeds untouched.
}

}  // namespace
}  // namespace scopeflow
