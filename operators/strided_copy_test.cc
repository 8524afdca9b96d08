#include "operators/strided_copy.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

TEST(MergeBoxTest, DropsOnesAndMergesContiguousNeighbours) {
  // [2, 1, 3, 4] contiguous in both: one run of 24.
  auto box = MergeBox({2, 1, 3, 4}, {12, 12, 4, 1}, {12, 12, 4, 1});
  ASSERT_TRUE(box.has_value());
  EXPECT_THAT(box->dims, ElementsAre(24));
  EXPECT_THAT(box->dst_strides, ElementsAre(1));
  EXPECT_THAT(box->src_strides, ElementsAre(1));
  // A transpose's source strides: nothing merges.
  box = MergeBox({3, 2}, {2, 1}, {1, 3});
  ASSERT_TRUE(box.has_value());
  EXPECT_THAT(box->dims, ElementsAre(3, 2));
  // A broadcast source (stride 0 on both outer axes) still merges them.
  box = MergeBox({2, 3, 4}, {12, 4, 1}, {0, 0, 1});
  ASSERT_TRUE(box.has_value());
  EXPECT_THAT(box->dims, ElementsAre(6, 4));
  EXPECT_THAT(box->src_strides, ElementsAre(0, 1));
  // Only ones: a single element. A zero: nothing.
  box = MergeBox({1, 1}, {1, 1}, {1, 1});
  ASSERT_TRUE(box.has_value());
  EXPECT_TRUE(box->dims.empty());
  EXPECT_FALSE(MergeBox({4, 0}, {1, 1}, {1, 1}).has_value());
}

TEST(CopyStridedTest, TransposesAMatrix) {
  const std::vector<int32_t> src = {1, 2, 3, 4, 5, 6};  // [2, 3]
  std::vector<int32_t> dst(6);
  // dst[j][i] = src[i][j]: the box is dst's [3, 2].
  CopyStrided(dst.data(), {2, 1}, src.data(), {1, 3}, {3, 2}, sizeof(int32_t));
  EXPECT_THAT(dst, ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST(CopyStridedTest, BroadcastsAndReverses) {
  const std::vector<int16_t> row = {7, 8, 9};
  std::vector<int16_t> dst(6);
  // Two copies of the row: source stride 0 along the first axis.
  CopyStrided(dst.data(), {3, 1}, row.data(), {0, 1}, {2, 3}, sizeof(int16_t));
  EXPECT_THAT(dst, ElementsAre(7, 8, 9, 7, 8, 9));
  // Reversed: from the last element, stride -1.
  std::vector<int16_t> reversed(3);
  CopyStrided(reversed.data(), {1}, row.data() + 2, {-1}, {3}, sizeof(int16_t));
  EXPECT_THAT(reversed, ElementsAre(9, 8, 7));
}

// Element sizes with a fixed-size copy (1, 8) and without one (12).
TEST(CopyStridedTest, AnyElementSize) {
  const std::vector<uint8_t> bytes = {1, 2, 3, 4};  // [2, 2]
  std::vector<uint8_t> bytes_t(4);
  CopyStrided(bytes_t.data(), {2, 1}, bytes.data(), {1, 2}, {2, 2}, 1);
  EXPECT_THAT(bytes_t, ElementsAre(1, 3, 2, 4));
  const std::vector<double> doubles = {0.5, 1.5, 2.5, 3.5};
  std::vector<double> doubles_t(4);
  CopyStrided(doubles_t.data(), {2, 1}, doubles.data(), {1, 2}, {2, 2},
              sizeof(double));
  EXPECT_THAT(doubles_t, ElementsAre(0.5, 2.5, 1.5, 3.5));
  using Triple = std::array<int32_t, 3>;
  const std::vector<Triple> triples = {
      {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}};
  std::vector<Triple> triples_t(4);
  CopyStrided(triples_t.data(), {2, 1}, triples.data(), {1, 2}, {2, 2},
              sizeof(Triple));
  EXPECT_EQ(triples_t[1], (Triple{3, 3, 3}));
  EXPECT_EQ(triples_t[2], (Triple{2, 2, 2}));
}

TEST(CopyStridedTest, EmptyBoxAndScalar) {
  const int64_t src = 42;
  int64_t dst = 0;
  CopyStrided(&dst, {1, 1}, &src, {1, 1}, {0, 5}, sizeof(int64_t));
  EXPECT_EQ(dst, 0);
  CopyStrided(&dst, {}, &src, {}, {}, sizeof(int64_t));
  EXPECT_EQ(dst, 42);
}

// A box large enough to be split over threads (where there are several):
// NCHW to NHWC, every element checked.
TEST(CopyStridedTest, LargeBoxes) {
  constexpr int64_t kN = 4, kC = 40, kH = 30, kW = 35;
  std::vector<int32_t> src(kN * kC * kH * kW);
  std::iota(src.begin(), src.end(), 0);
  std::vector<int32_t> dst(src.size(), -1);
  // The box is dst's [N, H, W, C]; the source strides of those axes.
  CopyStrided(dst.data(), {kH * kW * kC, kW * kC, kC, 1}, src.data(),
              {kC * kH * kW, kW, 1, kH * kW}, {kN, kH, kW, kC},
              sizeof(int32_t));
  int64_t mismatches = 0, i = 0;
  for (int64_t n = 0; n < kN; ++n) {
    for (int64_t h = 0; h < kH; ++h) {
      for (int64_t w = 0; w < kW; ++w) {
        for (int64_t c = 0; c < kC; ++c) {
          mismatches += dst[i++] != ((n * kC + c) * kH + h) * kW + w;
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Images of 3 channels moved last: the box's innermost row is 3 elements,
// which the copy walks the other way round. With one image and with
// several, every element checked.
TEST(CopyStridedTest, ShortInnermostRows) {
  constexpr int64_t kC = 3, kH = 20, kW = 24;
  for (int64_t n_images : {1, 5}) {
    std::vector<float> src(n_images * kC * kH * kW);
    std::iota(src.begin(), src.end(), 0.0f);
    std::vector<float> dst(src.size(), -1.0f);
    CopyStrided(dst.data(), {kH * kW * kC, kC, 1}, src.data(),
                {kC * kH * kW, 1, kH * kW}, {n_images, kH * kW, kC},
                sizeof(float));
    int64_t mismatches = 0, i = 0;
    for (int64_t n = 0; n < n_images; ++n) {
      for (int64_t p = 0; p < kH * kW; ++p) {
        for (int64_t c = 0; c < kC; ++c) {
          mismatches +=
              dst[i++] != static_cast<float>((n * kC + c) * kH * kW + p);
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << n_images << " images";
  }
}

// 4-byte transposes go tile by tile (8 x 8): every size around a tile's,
// full tiles and edges, both ways (NCHW to NHWC and back), with several
// batches outside, every element checked bit for bit (NaN payloads
// included: tiles move floats through vector registers).
TEST(CopyStridedTest, TransposesInTilesEverySize) {
  for (int64_t rows : {7, 8, 9, 15, 16, 17, 40}) {
    for (int64_t cols : {8, 9, 16, 23, 24}) {
      constexpr int64_t kBatches = 3;
      std::vector<uint32_t> src(kBatches * rows * cols);
      for (size_t i = 0; i < src.size(); ++i) {
        src[i] = 0x7fc00000u + static_cast<uint32_t>(i);  // NaN payloads
      }
      // src holds [batch, cols, rows]; dst [batch, rows, cols].
      std::vector<uint32_t> dst(src.size(), 0);
      CopyStrided(dst.data(), {rows * cols, cols, 1}, src.data(),
                  {rows * cols, 1, rows}, {kBatches, rows, cols},
                  sizeof(uint32_t));
      int64_t mismatches = 0;
      for (int64_t b = 0; b < kBatches; ++b) {
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            mismatches += dst[(b * rows + i) * cols + j] !=
                          src[(b * cols + j) * rows + i];
          }
        }
      }
      EXPECT_EQ(mismatches, 0) << rows << " x " << cols;
      // And back.
      std::vector<uint32_t> back(src.size(), 0);
      CopyStrided(back.data(), {rows * cols, 1, rows}, dst.data(),
                  {rows * cols, cols, 1}, {kBatches, rows, cols},
                  sizeof(uint32_t));
      EXPECT_EQ(back, src) << rows << " x " << cols;
    }
  }
}

// A transpose whose source rows lie backwards (a negative stride) or
// repeat (a broadcast dim outside): the tiles read what the strides say.
TEST(CopyStridedTest, TransposesWithReversedAndBroadcastSources) {
  constexpr int64_t kRows = 16, kCols = 12;
  std::vector<float> src(kRows * kCols);
  std::iota(src.begin(), src.end(), 0.0f);
  // dst[b][i][j] = src[(kCols - 1 - j) * kRows + i] for two b (broadcast).
  std::vector<float> dst(2 * kRows * kCols, -1.0f);
  CopyStrided(dst.data(), {kRows * kCols, kCols, 1},
              src.data() + (kCols - 1) * kRows, {0, 1, -kRows},
              {2, kRows, kCols}, sizeof(float));
  int64_t mismatches = 0;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        mismatches += dst[(b * kRows + i) * kCols + j] !=
                      src[(kCols - 1 - j) * kRows + i];
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace scopeflow
