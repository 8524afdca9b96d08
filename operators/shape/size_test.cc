#include <cstdint>
#include <vector>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kSizeOp[] = R"pb(type: "size"
                                inputs { slot: "X" vars: "x" }
                                outputs { slot: "Out" vars: "n" })pb";

// numpy's x.size: the product of the dims, 1 for a scalar, 0 for an empty
// tensor, whatever the dtype.
TEST(SizeTest, CountsTheElementsAsAnInt64Scalar) {
  const std::vector<std::pair<Tensor, int64_t>> cases = {
      {MakeTensor<float>({3, 4, 5}, std::vector<float>(60, 1)), 60},
      {MakeTensor<double>({}, {2.5}), 1},
      {MakeTensor<int64_t>({2, 0, 3}, {}), 0},
      {MakeTensor<bool>({4}, {true, false, true, true}), 4},
      {MakeTensor<int32_t>({1, 1, 7}, {1, 2, 3, 4, 5, 6, 7}), 7},
  };
  for (const auto& [x, expected] : cases) {
    SCOPED_TRACE(expected);
    auto out = RunOp(kSizeOp, {{"x", x}}, {"n"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dtype(), kInt64);
    EXPECT_THAT((*out)[0].dims(), IsEmpty());
    EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(expected));
  }
}

TEST(SizeTest, InfersAnInt64ScalarWhateverIsKnownOfX) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 3}, std::vector<int64_t>{-1, 3}}) {
    auto info = InferAtPrepare(kSizeOp, {{"x", kFloat32, shape}}, "n");
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->dtype, kInt64);
    EXPECT_TRUE(info->has_dims);
    EXPECT_THAT(info->dims, IsEmpty());
  }
}

}  // namespace
}  // namespace scopeflow
