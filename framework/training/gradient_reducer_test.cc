#include "framework/training/gradient_reducer.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

Tensor Filled(const Dims& dims, const std::vector<float>& values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), kFloat32, dims).ok());
  std::memcpy(tensor.data<float>(), values.data(),
              values.size() * sizeof(float));
  return tensor;
}

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> values(NumElements(dims));
  for (float& v : values) v = normal(rng);
  return Filled(dims, values);
}

std::vector<float> Values(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(),
                            tensor.data<float>() + tensor.numel());
}

TEST(GradientReducerTest, SumsInReplicaOrderAndScales) {
  GradientReducer reducer;
  const std::vector<std::vector<Tensor>> grads = {
      {Filled({2}, {1, 2}), Filled({1}, {10})},
      {Filled({2}, {3, 4}), Filled({1}, {20})},
      {Filled({2}, {5, 6}), Filled({1}, {30})}};
  ASSERT_TRUE(reducer.Start(grads, {"a@GRAD", "b@GRAD"}, 0.5f).ok());
  EXPECT_EQ(reducer.total_elements(), 3);
  reducer.ReducePart(0, 1);
  ASSERT_EQ(reducer.sums().size(), 2u);
  EXPECT_EQ(Values(reducer.sums()[0]), (std::vector<float>{4.5f, 6.0f}));
  EXPECT_EQ(Values(reducer.sums()[1]), (std::vector<float>{30.0f}));
  EXPECT_EQ(reducer.sums()[0].dims(), (Dims{2}));
  // The sums lie end to end in one buffer.
  EXPECT_EQ(Values(reducer.flat()), (std::vector<float>{4.5f, 6.0f, 30.0f}));
}

// Whatever the number of parts (threads), each element is summed in the
// same order: the results are the same bits.
TEST(GradientReducerTest, PartsDoNotChangeTheBits) {
  std::vector<std::vector<Tensor>> grads;
  for (uint32_t r = 0; r < 4; ++r) {
    grads.push_back(
        {Random({37, 5}, r), Random({3}, 10 + r), Random({64, 2}, 20 + r)});
  }
  const std::vector<std::string> names = {"w", "b", "v"};
  GradientReducer whole;
  ASSERT_TRUE(whole.Start(grads, names, 0.25f).ok());
  whole.ReducePart(0, 1);
  const std::vector<float> expected = Values(whole.flat());
  for (int parts : {2, 3, 7, 400}) {
    GradientReducer split;
    ASSERT_TRUE(split.Start(grads, names, 0.25f).ok());
    for (int part = parts - 1; part >= 0; --part) split.ReducePart(part, parts);
    const std::vector<float> got = Values(split.flat());
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(
        std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
        << parts << " parts";
  }
}

TEST(GradientReducerTest, MismatchesNameTheGradientAndReplica) {
  GradientReducer reducer;
  absl::Status shape = reducer.Start(
      {{Filled({2}, {1, 2})}, {Filled({3}, {1, 2, 3})}}, {"w@GRAD"}, 1);
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.message(),
              HasSubstr("gradient \"w@GRAD\" of replica 1 has shape [3], "
                        "replica 0's [2]"));
  Tensor ints;
  ASSERT_TRUE(ints.Allocate(CPUPlace(), kInt64, {2}).ok());
  absl::Status dtype =
      reducer.Start({{Filled({2}, {1, 2})}, {ints}}, {"w@GRAD"}, 1);
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.message(),
              HasSubstr("gradient \"w@GRAD\" of replica 1 is"));
  EXPECT_THAT(dtype.message(), HasSubstr("expected a float32 tensor"));
  absl::Status count =
      reducer.Start({{Filled({2}, {1, 2})}, {}}, {"w@GRAD"}, 1);
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(count.message(),
              HasSubstr("replica 1 returned 0 gradients, expected 1"));
}

}  // namespace
}  // namespace scopeflow
