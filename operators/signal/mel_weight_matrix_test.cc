// The mel_weight_matrix op against ONNX's reference algorithm (run in numpy
// for these inputs; the points checked by hand below) and its errors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string MelOp(DataType out_dtype = kFloat32) {
  return absl::StrCat(R"pb(type: "mel_weight_matrix"
                           inputs { slot: "NumMelBins" vars: "mels" }
                           inputs { slot: "DftLength" vars: "n" }
                           inputs { slot: "SampleRate" vars: "rate" }
                           inputs { slot: "LowerEdgeHertz" vars: "low" }
                           inputs { slot: "UpperEdgeHertz" vars: "high" }
                           outputs { slot: "Out" vars: "y" }
                           attrs { name: "out_dtype" i:)pb",
                      static_cast<int>(out_dtype), " }");
}

absl::StatusOr<std::vector<Tensor>> RunMel(int64_t mels, int64_t n,
                                           int64_t rate, float low, float high,
                                           DataType out_dtype = kFloat32) {
  return RunOp(MelOp(out_dtype),
               {{"mels", MakeTensor<int64_t>({}, {mels})},
                {"n", MakeTensor<int64_t>({}, {n})},
                {"rate", MakeTensor<int32_t>({}, {static_cast<int32_t>(rate)})},
                {"low", MakeTensor<float>({}, {low})},
                {"high", MakeTensor<float>({}, {high})}},
               {"y"});
}

TEST(MelWeightMatrixTest, TriangularBands) {
  // 3 bands, 0-500 Hz, dft_length 32 at 1000 Hz: mel(500) = 607.45, 5 mel
  // steps of 121.49 give 0, 79.7, 178.8, 269.6, 382.3 Hz, in bins
  // floor(33 f / 1000) = 0, 2, 5, 8, 12. Band 0 rises over bins 0-2 and
  // falls over 2-5; band 2 rises over 5-8 and falls over 8-12.
  auto out = RunMel(3, 32, 1000, 0, 500, kFloat64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat64);
  EXPECT_THAT((*out)[0].dims(), ElementsAre(17, 3));
  const double third = 1.0 / 3;
  std::vector<double> expected = {0,         0,         0,          //
                                  0.5,       0,         0,          //
                                  1,         0,         0,          //
                                  2 * third, third,     0,          //
                                  third,     2 * third, 0,          //
                                  0,         1,         0,          //
                                  0,         2 * third, third,      //
                                  0,         third,     2 * third,  //
                                  0,         0,         1,          //
                                  0,         0,         0.75,       //
                                  0,         0,         0.5,        //
                                  0,         0,         0.25};
  expected.resize(17 * 3, 0.0);
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-15), expected));
}

TEST(MelWeightMatrixTest, BandsOfOneBin) {
  // 4 bands, 100-800 Hz, dft_length 16 at 1600 Hz: the points land in bins
  // 1, 2, 3, 4, 5, 6, one apart, so each band is 1 at its centre alone.
  auto out = RunMel(4, 16, 1600, 100, 800);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), kFloat32);
  std::vector<float> expected(9 * 4, 0.0f);
  for (int band = 0; band < 4; ++band) expected[(band + 2) * 4 + band] = 1;
  EXPECT_EQ(Values<float>((*out)[0]), expected);
}

TEST(MelWeightMatrixTest, BadInputsAreNamed) {
  auto out = RunMel(0, 16, 1600, 0, 800);
  EXPECT_THAT(out.status().message(),
              HasSubstr("num_mel_bins = 0: expected 1 or more"));
  out = RunMel(4, 16, 1600, 500, 100);
  EXPECT_THAT(out.status().message(),
              HasSubstr("edges [500, 100] Hz: expected 0 <= lower_edge_hertz "
                        "<= upper_edge_hertz"));
  out = RunMel(4, 16, 1000, 0, 4000);
  EXPECT_THAT(out.status().message(),
              HasSubstr("expected upper_edge_hertz <= sample_rate / 2"));
  out = RunMel(4, 16, 1600, 0, 800, kInt32);
  EXPECT_THAT(out.status().message(),
              HasSubstr("must be float32 (1) or float64"));
  out = RunOp(MelOp(),
              {{"mels", MakeTensor<float>({}, {4})},
               {"n", MakeTensor<int64_t>({}, {16})},
               {"rate", MakeTensor<int64_t>({}, {1600})},
               {"low", MakeTensor<float>({}, {0})},
               {"high", MakeTensor<float>({}, {800})}},
              {"y"});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace scopeflow
