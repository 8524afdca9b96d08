// The CUDA kernel of transfer_layout against its CPU kernel, and against
// each layout's index arithmetic.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/channel_blocks_testing.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAreArray;

const DataType kAllTypes[] = {kFloat32, kFloat64, kInt32, kInt64, kBool};

using Sizes = ImageSizes;

TEST(TransferLayoutCudaTest, EveryPairAndDtypeMatchesCpu) {
  SF_REQUIRE_CUDA();
  // One block and several, odd planes, and an empty batch.
  const Sizes sizes[] = {
      {1, 16, 1, 1}, {2, 32, 3, 5}, {3, 64, 17, 19}, {0, 48, 4, 4}};
  uint64_t seed = 1;
  for (DataType dtype : kAllTypes) {
    for (const Sizes& s : sizes) {
      for (const std::string src : kImageFormats) {
        for (const std::string dst : kImageFormats) {
          EXPECT_TRUE(MatchesOnCuda(
              TransferLayoutOp(src, dst),
              {{"x", RandomTensor(dtype, DimsIn(src, s), seed++, -10, 10)}},
              {"y"}))
              << src << " to " << dst << ", " << DataTypeName(dtype) << " of "
              << DimsToString(DimsIn(src, s));
        }
      }
    }
  }
}

// Past 65535 blocks of 256 threads, where the grid-stride loops wrap.
TEST(TransferLayoutCudaTest, LargeImagesMatchCpu) {
  SF_REQUIRE_CUDA();
  constexpr Sizes kLarge = {2, 16, 1000, 561};
  const std::pair<const char*, const char*> pairs[] = {
      {"NCHW", "NCHW8c"},  {"NCHW8c", "NCHW"},   {"NHWC", "NCHW8c"},
      {"NCHW8c", "NHWC"},  {"NCHW", "NHWC"},     {"NCHW", "NCHW16c"},
      {"NCHW16c", "NHWC"}, {"NCHW8c", "NCHW16c"}};
  uint64_t seed = 1;
  for (const auto& [src, dst] : pairs) {
    EXPECT_TRUE(MatchesOnCuda(
        TransferLayoutOp(src, dst),
        {{"x", RandomTensor(kFloat32, DimsIn(src, kLarge), seed++)}}, {"y"}))
        << src << " to " << dst;
  }
}

// Each element (n, c, h, w) holds its NCHW index; the device must put it
// where the destination layout says, whatever the CPU kernel does.
TEST(TransferLayoutCudaTest, MatchesIndexArithmetic) {
  SF_REQUIRE_CUDA();
  constexpr Sizes s = {2, 48, 3, 5};
  for (const std::string src : kImageFormats) {
    const Tensor x = NchwOffsetsIn<int64_t>(src, s);
    for (const std::string dst : kImageFormats) {
      SCOPED_TRACE(src + " to " + dst);
      auto out = RunOpOnPlace(CUDAPlace(0), TransferLayoutOp(src, dst),
                              {{"x", x}}, {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_THAT((*out)[0].dims(), ElementsAreArray(DimsIn(dst, s)));
      EXPECT_EQ(CountNotAtNchwOffset(Values<int64_t>((*out)[0]), dst, s), 0);
    }
  }
}

}  // namespace
}  // namespace scopeflow
