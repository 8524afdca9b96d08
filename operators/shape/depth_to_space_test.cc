#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string BlockOp(const std::string& type, int blocksize,
                    const std::string& mode) {
  return absl::StrCat("type: \"", type, R"pb(" inputs { slot: "X" vars: "x" }
                      outputs { slot: "Out" vars: "y" }
                      attrs { name: "blocksize" i: )pb",
                      blocksize, " } attrs { name: \"mode\" s: \"", mode,
                      "\" }");
}

std::vector<int64_t> Iota(int n) {
  std::vector<int64_t> values(n);
  for (int i = 0; i < n; ++i) values[i] = i;
  return values;
}

TEST(DepthToSpaceTest, BothModesMatchTorch) {
  // x = arange(32).reshape(1, 8, 2, 2), blocksize 2. CRD is torch's
  // pixel_shuffle; DCR is torch's reshape(1, 2, 2, 2, 2, 2).permute(0, 3,
  // 4, 1, 5, 2), as ONNX defines it (torch 1.13).
  const Tensor x = MakeTensor<int64_t>({1, 8, 2, 2}, Iota(32));
  auto crd = RunOp(BlockOp("depth_to_space", 2, "CRD"), {{"x", x}}, {"y"});
  ASSERT_TRUE(crd.ok()) << crd.status();
  EXPECT_THAT((*crd)[0].dims(), ElementsAre(1, 2, 4, 4));
  EXPECT_EQ(Values<int64_t>((*crd)[0]),
            std::vector<int64_t>({0,  4,  1,  5,  8,  12, 9,  13, 2,  6,  3,
                                  7,  10, 14, 11, 15, 16, 20, 17, 21, 24, 28,
                                  25, 29, 18, 22, 19, 23, 26, 30, 27, 31}));
  auto dcr = RunOp(BlockOp("depth_to_space", 2, "DCR"), {{"x", x}}, {"y"});
  ASSERT_TRUE(dcr.ok()) << dcr.status();
  EXPECT_EQ(Values<int64_t>((*dcr)[0]),
            std::vector<int64_t>({0,  8,  1,  9,  16, 24, 17, 25, 2,  10, 3,
                                  11, 18, 26, 19, 27, 4,  12, 5,  13, 20, 28,
                                  21, 29, 6,  14, 7,  15, 22, 30, 23, 31}));
}

TEST(SpaceToDepthTest, BothModesMatchTorch) {
  // y = arange(32).reshape(1, 2, 4, 4): CRD is torch's pixel_unshuffle,
  // DCR (ONNX's SpaceToDepth) reshape(1, 2, 2, 2, 2, 2).permute(0, 3, 5, 1,
  // 2, 4).
  const Tensor x = MakeTensor<int64_t>({1, 2, 4, 4}, Iota(32));
  auto crd = RunOp(BlockOp("space_to_depth", 2, "CRD"), {{"x", x}}, {"y"});
  ASSERT_TRUE(crd.ok()) << crd.status();
  EXPECT_THAT((*crd)[0].dims(), ElementsAre(1, 8, 2, 2));
  EXPECT_EQ(Values<int64_t>((*crd)[0]),
            std::vector<int64_t>({0,  2,  8,  10, 1,  3,  9,  11, 4,  6,  12,
                                  14, 5,  7,  13, 15, 16, 18, 24, 26, 17, 19,
                                  25, 27, 20, 22, 28, 30, 21, 23, 29, 31}));
  auto dcr = RunOp(BlockOp("space_to_depth", 2, "DCR"), {{"x", x}}, {"y"});
  ASSERT_TRUE(dcr.ok()) << dcr.status();
  EXPECT_EQ(Values<int64_t>((*dcr)[0]),
            std::vector<int64_t>({0,  2,  8,  10, 16, 18, 24, 26, 1,  3,  9,
                                  11, 17, 19, 25, 27, 4,  6,  12, 14, 20, 22,
                                  28, 30, 5,  7,  13, 15, 21, 23, 29, 31}));
}

TEST(DepthToSpaceTest, GradientsAreEachOther) {
  for (const char* mode : {"DCR", "CRD"}) {
    SCOPED_TRACE(mode);
    absl::Status status =
        CheckGradient(BlockOp("depth_to_space", 2, mode),
                      {{"x", MakeTensor<double>({2, 8, 2, 3},
                                                RandomValues(96, 7))}});
    EXPECT_TRUE(status.ok()) << status;
    status = CheckGradient(BlockOp("space_to_depth", 3, mode),
                           {{"x", MakeTensor<double>({1, 2, 3, 6},
                                                     RandomValues(36, 8))}});
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(DepthToSpaceTest, UnknownDimsStayUnknown) {
  auto info = InferAtPrepare(BlockOp("depth_to_space", 2, "DCR"),
                             {{"x", kFloat32, {-1, 12, -1, 5}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 3, -1, 10));
}

TEST(DepthToSpaceTest, BlocksizeMustDivide) {
  absl::Status status =
      PrepareOp(BlockOp("depth_to_space", 2, "DCR"),
                {{"x", MakeTensor<float>({1, 6, 1, 1}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (depth_to_space): attribute \"blocksize\" = 2: "
                        "expected blocksize^2 = 4 to divide the 6 channels of "
                        "input \"X\" (variable \"x\""));
  status = PrepareOp(BlockOp("space_to_depth", 2, "DCR"),
                     {{"x", MakeTensor<float>({1, 1, 2, 3}, {1, 2, 3, 4, 5,
                                                             6})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("op 0 (space_to_depth): attribute \"blocksize\" = 2: "
                        "expected it to divide the width (3) of input \"X\" "
                        "(variable \"x\""));
  status = PrepareOp(BlockOp("space_to_depth", 2, "DCR"),
                     {{"x", MakeTensor<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7,
                                                       8})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("input \"X\" (variable \"x\") has shape [4, 2]: "
                        "expected rank 4"));
  status = PrepareOp(BlockOp("depth_to_space", 2, "RDC"),
                     {{"x", MakeTensor<float>({1, 4, 1, 1}, {1, 2, 3, 4})}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("mode"));
  status = PrepareOp(BlockOp("depth_to_space", 0, "DCR"),
                     {{"x", MakeTensor<float>({1, 4, 1, 1}, {1, 2, 3, 4})}});
  EXPECT_THAT(std::string(status.message()), HasSubstr("blocksize"));
}

}  // namespace
}  // namespace scopeflow
