// The CUDA kernel of transfer_layout against its CPU kernel, and against
// each layout's index arithmetic.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/cuda_test_util.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/place.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAreArray;

const char* const kFormats[] = {"NCHW", "NHWC", "NCHW8c"};
const DataType kAllTypes[] = {kFloat32, kFloat64, kInt32, kInt64, kBool};

std::string TransferOp(const std::string& src, const std::string& dst) {
  return absl::StrFormat(
      "type: \"transfer_layout\" inputs { slot: \"X\" vars: \"x\" } outputs "
      "{ slot: \"Out\" vars: \"y\" } attrs { name: \"src_format\" s: \"%s\" "
      "} attrs { name: \"dst_format\" s: \"%s\" }",
      src, dst);
}

// An image's sizes, whatever its layout.
struct Sizes {
  int64_t n, c, h, w;
};

Dims DimsIn(const std::string& format, const Sizes& s) {
  if (format == "NCHW") return {s.n, s.c, s.h, s.w};
  if (format == "NHWC") return {s.n, s.h, s.w, s.c};
  return {s.n, s.c / 8, s.h, s.w, 8};
}

// Where element (n, c, h, w) lies in `format` (NCHW8c:
// operators/channel_blocks.h).
int64_t OffsetIn(const std::string& format, const Sizes& s, int64_t n,
                 int64_t c, int64_t h, int64_t w) {
  if (format == "NCHW") return ((n * s.c + c) * s.h + h) * s.w + w;
  if (format == "NHWC") return ((n * s.h + h) * s.w + w) * s.c + c;
  return (((n * (s.c / 8) + c / 8) * s.h + h) * s.w + w) * 8 + c % 8;
}

TEST(TransferLayoutCudaTest, EveryPairAndDtypeMatchesCpu) {
  SF_REQUIRE_CUDA();
  // One block and several, odd planes, and an empty batch.
  const Sizes sizes[] = {
      {1, 8, 1, 1}, {2, 16, 3, 5}, {3, 64, 17, 19}, {0, 24, 4, 4}};
  uint64_t seed = 1;
  for (DataType dtype : kAllTypes) {
    for (const Sizes& s : sizes) {
      for (const std::string src : kFormats) {
        for (const std::string dst : kFormats) {
          EXPECT_TRUE(MatchesOnCuda(
              TransferOp(src, dst),
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
  const std::pair<const char*, const char*> pairs[] = {{"NCHW", "NCHW8c"},
                                                       {"NCHW8c", "NCHW"},
                                                       {"NHWC", "NCHW8c"},
                                                       {"NCHW8c", "NHWC"},
                                                       {"NCHW", "NHWC"}};
  uint64_t seed = 1;
  for (const auto& [src, dst] : pairs) {
    EXPECT_TRUE(MatchesOnCuda(
        TransferOp(src, dst),
        {{"x", RandomTensor(kFloat32, DimsIn(src, kLarge), seed++)}}, {"y"}))
        << src << " to " << dst;
  }
}

// Each element (n, c, h, w) holds its NCHW index; the device must put it
// where the destination layout says, whatever the CPU kernel does.
TEST(TransferLayoutCudaTest, MatchesIndexArithmetic) {
  SF_REQUIRE_CUDA();
  constexpr Sizes s = {2, 24, 3, 5};
  for (const std::string src : kFormats) {
    std::vector<int64_t> values(s.n * s.c * s.h * s.w);
    for (int64_t n = 0; n < s.n; ++n) {
      for (int64_t c = 0; c < s.c; ++c) {
        for (int64_t h = 0; h < s.h; ++h) {
          for (int64_t w = 0; w < s.w; ++w) {
            values[OffsetIn(src, s, n, c, h, w)] =
                OffsetIn("NCHW", s, n, c, h, w);
          }
        }
      }
    }
    const Tensor x = MakeTensor<int64_t>(DimsIn(src, s), values);
    for (const std::string dst : kFormats) {
      SCOPED_TRACE(src + " to " + dst);
      auto out =
          RunOpOnPlace(CUDAPlace(0), TransferOp(src, dst), {{"x", x}}, {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_THAT((*out)[0].dims(), ElementsAreArray(DimsIn(dst, s)));
      const std::vector<int64_t> got = Values<int64_t>((*out)[0]);
      int64_t mismatches = 0;
      for (int64_t n = 0; n < s.n; ++n) {
        for (int64_t c = 0; c < s.c; ++c) {
          for (int64_t h = 0; h < s.h; ++h) {
            for (int64_t w = 0; w < s.w; ++w) {
              mismatches += got[OffsetIn(dst, s, n, c, h, w)] !=
                            OffsetIn("NCHW", s, n, c, h, w);
            }
          }
        }
      }
      EXPECT_EQ(mismatches, 0);
    }
  }
}

}  // namespace
}  // namespace scopeflow
