// logical_not, logical_and, logical_or and logical_xor: truth tables,
// broadcasting and the refusal of non-bool inputs.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string BinaryOp(const std::string& type) {
  return absl::StrFormat(R"pb(type: "%s"
                              inputs { slot: "X" vars: "x" }
                              inputs { slot: "Y" vars: "y" }
                              outputs { slot: "Out" vars: "out" })pb",
                         type);
}

absl::StatusOr<Tensor> RunBinary(const std::string& type, const Tensor& x,
                                 const Tensor& y) {
  auto out = RunOp(BinaryOp(type), {{"x", x}, {"y", y}}, {"out"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

TEST(LogicalTest, TruthTables) {
  const Tensor x = MakeTensor<bool>({4}, {false, false, true, true});
  const Tensor y = MakeTensor<bool>({4}, {false, true, false, true});
  struct Case {
    std::string op;
    std::vector<bool> expected;
  };
  for (const Case& c : std::vector<Case>{
           {"logical_and", {false, false, false, true}},
           {"logical_or", {false, true, true, true}},
           {"logical_xor", {false, true, true, false}},
       }) {
    SCOPED_TRACE(c.op);
    auto out = RunBinary(c.op, x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->dtype(), kBool);
    EXPECT_EQ(Values<bool>(*out), c.expected);
  }
}

TEST(LogicalTest, Not) {
  auto out = RunOp(
      R"pb(type: "logical_not"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "out" })pb",
      {{"x", MakeTensor<bool>({2, 2}, {true, false, false, true})}}, {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 2));
  EXPECT_EQ(Values<bool>((*out)[0]),
            (std::vector<bool>{false, true, true, false}));
}

TEST(LogicalTest, Broadcasts) {
  // x [2, 1] against y [3]: out[i][j] = x[i] op y[j].
  const Tensor x = MakeTensor<bool>({2, 1}, {true, false});
  const Tensor y = MakeTensor<bool>({3}, {true, false, true});
  auto out = RunBinary("logical_xor", x, y);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->dims(), ElementsAre(2, 3));
  EXPECT_EQ(Values<bool>(*out),
            (std::vector<bool>{false, true, false, true, false, true}));
  auto and_out = RunBinary("logical_and", y, x);
  ASSERT_TRUE(and_out.ok()) << and_out.status();
  EXPECT_EQ(Values<bool>(*and_out),
            (std::vector<bool>{true, false, true, false, false, false}));
}

TEST(LogicalTest, NonBoolInputsAreRefused) {
  auto out = RunBinary("logical_or", MakeTensor<bool>({1}, {true}),
                       MakeTensor<float>({1}, {1}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("logical_or"));
  EXPECT_THAT(out.status().message(), HasSubstr("y"));
  auto mismatched =
      RunBinary("logical_and", MakeTensor<bool>({2}, {true, true}),
                MakeTensor<bool>({3}, {true, true, true}));
  ASSERT_FALSE(mismatched.ok());
}

}  // namespace
}  // namespace scopeflow
