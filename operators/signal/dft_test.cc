// The dft op against hand-computed transforms and numpy.fft's (values
// pasted with the numpy call that gave them), its gradient against central
// differences in every form, and its errors.
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

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// A dft op reading x, and "n" (DftLength) and "a" (Axis) where asked.
std::string DftOp(bool inverse, bool onesided, int axis_attr = 1,
                  bool length_input = false, bool axis_input = false) {
  return absl::StrCat(
      R"pb(type: "dft"
           inputs { slot: "X" vars: "x" })pb",
      length_input ? R"pb(inputs { slot: "DftLength" vars: "n" })pb" : "",
      axis_input ? R"pb(inputs { slot: "Axis" vars: "a" })pb" : "",
      R"pb(outputs { slot: "Out" vars: "y" }
           attrs { name: "axis" i:)pb",
      axis_attr, R"pb(}
                      attrs { name: "inverse" b: )pb",
      inverse ? "true" : "false", R"pb(}
                                       attrs { name: "onesided" b: )pb",
      onesided ? "true" : "false", " }");
}

constexpr double kTolerance = 1e-12;

TEST(DftTest, RealSignalFullSpectrum) {
  // [1, 2, 3, 4]: X[k] = sum_t x[t] (-i)^(k t) = 10, -2+2i, -2, -2-2i.
  auto out = RunOp(DftOp(false, false),
                   {{"x", MakeTensor<double>({1, 4, 1}, {1, 2, 3, 4})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 4, 2));
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(kTolerance),
                        std::vector<double>{10, 0, -2, 2, -2, 0, -2, -2}));
}

TEST(DftTest, InverseOfTheSpectrumIsTheSignal) {
  auto out = RunOp(
      DftOp(true, false),
      {{"x", MakeTensor<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(FloatNear(1e-6f), std::vector<float>{1, 0, 2, 0, 3, 0, 4, 0}));
}

TEST(DftTest, OneSidedWithPaddingAndTruncation) {
  // np.fft.rfft([1, 2, 3, 4], n=5)
  auto out = RunOp(DftOp(false, true, 1, /*length_input=*/true),
                   {{"x", MakeTensor<double>({1, 4, 1}, {1, 2, 3, 4})},
                    {"n", MakeTensor<int64_t>({}, {5})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3, 2));
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-8),
                        std::vector<double>{10, 0, -4.04508497, -1.31432778,
                                            1.54508497, -2.12662702}));
  // np.fft.fft([1, 2, 3, 4], n=2): the first two values only.
  out = RunOp(DftOp(false, false, 1, true),
              {{"x", MakeTensor<double>({1, 4, 1}, {1, 2, 3, 4})},
               {"n", MakeTensor<int32_t>({}, {2})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(
      Values<double>((*out)[0]),
      Pointwise(DoubleNear(kTolerance), std::vector<double>{3, 0, -1, 0}));
}

TEST(DftTest, InverseOneSidedGivesTheRealSignal) {
  const Tensor half = MakeTensor<double>({1, 3, 2}, {10, 0, -2, 2, -2, 0});
  // Default length 2 * (3 - 1) = 4: back to [1, 2, 3, 4].
  auto out = RunOp(DftOp(true, true), {{"x", half}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 4, 1));
  EXPECT_THAT(
      Values<double>((*out)[0]),
      Pointwise(DoubleNear(kTolerance), std::vector<double>{1, 2, 3, 4}));
  // np.fft.irfft([10, -2+2j, -2], n=5): odd, no bin stands alone at n / 2.
  out = RunOp(DftOp(true, true, 1, true),
              {{"x", half}, {"n", MakeTensor<int64_t>({}, {5})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-8),
                        std::vector<double>{0.4, 1.63915479, 1.9297718,
                                            2.8702282, 3.16084521}));
  // np.fft.irfft([10, -2+2j, -2, 7-1j], n=3): bins past n / 2 unread.
  out =
      RunOp(DftOp(true, true, 1, true),
            {{"x", MakeTensor<double>({1, 4, 2}, {10, 0, -2, 2, -2, 0, 7, -1})},
             {"n", MakeTensor<int64_t>({}, {3})}},
            {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-8),
                        std::vector<double>{2, 2.84529946, 5.15470054}));
}

// a = [[0+0.5j, 1-1j, 2+2j], [3+1j, 4+0j, 5-0.5j]] as [2, 3, 2].
Tensor ComplexMatrix() {
  return MakeTensor<double>({2, 3, 2},
                            {0, 0.5, 1, -1, 2, 2, 3, 1, 4, 0, 5, -0.5});
}

TEST(DftTest, AxisFromAttributeOrInput) {
  // np.fft.fft(a, axis=0)
  const std::vector<double> along_0 = {3,  1.5,  5,  -1, 7,  1.5,
                                       -3, -0.5, -3, -1, -3, 2.5};
  auto out = RunOp(DftOp(false, false, 0), {{"x", ComplexMatrix()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(kTolerance), along_0));
  // The Axis input wins over the attribute; -3 is axis 0 here (-2, the
  // last signal axis, is 1).
  out = RunOp(DftOp(false, false, 1, false, true),
              {{"x", ComplexMatrix()}, {"a", MakeTensor<int64_t>({}, {-3})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(kTolerance), along_0));
  // np.fft.ifft(a, axis=1, n=4)
  out = RunOp(DftOp(true, false, 1, true),
              {{"x", ComplexMatrix()}, {"n", MakeTensor<int64_t>({}, {4})}},
              {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 4, 2));
  EXPECT_THAT(
      Values<double>((*out)[0]),
      Pointwise(DoubleNear(kTolerance),
                std::vector<double>{0.75, 0.375, -0.25, -0.125, 0.25, 0.875,
                                    -0.75, -0.625, 3, 0.125, -0.5, 1.375, 1,
                                    0.125, -0.5, -0.625}));
}

TEST(DftTest, ShapeWaitsForAFedAxisOrLength) {
  auto info =
      InferAtPrepare(DftOp(false, true, 1, true, false),
                     {{"x", kFloat32, {2, 8, 3, 1}}, {"n", kInt64, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(2, -1, 3, 2));
  info =
      InferAtPrepare(DftOp(true, true, 1, false, true),
                     {{"x", kFloat32, {2, 8, 3, 2}}, {"a", kInt64, {}}}, "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, -1, -1, 1));
  info = InferAtPrepare(DftOp(false, true, 2), {{"x", kFloat64, {2, 8, 6, 1}}},
                        "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(2, 8, 4, 2));
}

// Every form, real and complex, with the transform's length equal to,
// longer and shorter than X's.
TEST(DftTest, GradientOfEveryForm) {
  struct Form {
    bool inverse;
    bool onesided;
    int64_t parts;
  };
  for (const Form& form :
       {Form{false, false, 1}, Form{false, false, 2}, Form{true, false, 1},
        Form{true, false, 2}, Form{false, true, 1}, Form{true, true, 2}}) {
    for (int64_t n : {0, 5, 8, 3}) {
      SCOPED_TRACE(absl::StrCat("inverse ", form.inverse, " onesided ",
                                form.onesided, " parts ", form.parts, " n ",
                                n));
      std::vector<Feed> feeds = {
          {"x", MakeTensor<double>({2, 5, 3, form.parts},
                                   RandomValues(30 * form.parts, 7))},
          {"a", MakeTensor<int64_t>({}, {1})}};
      if (n > 0) feeds.push_back({"n", MakeTensor<int64_t>({}, {n})});
      GradCheckOptions options;
      options.wrt = {"x"};
      const absl::Status status = CheckGradient(
          DftOp(form.inverse, form.onesided, 0, n > 0, true), feeds, options);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(DftTest, BadInputsAreNamed) {
  const Tensor real = MakeTensor<float>({1, 4, 1}, {1, 2, 3, 4});
  const Tensor complex = MakeTensor<float>({1, 2, 2}, {1, 2, 3, 4});
  auto out =
      RunOp(DftOp(false, false),
            {{"x", MakeTensor<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\", shape [1, 2, 3]): "
                        "expected a last dimension of 1 (real) or 2"));
  out = RunOp(DftOp(false, true), {{"x", complex}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("is complex: a one-sided forward transform (RFFT) "
                        "takes real values"));
  out = RunOp(DftOp(true, true), {{"x", real}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("is real: a one-sided inverse transform (IRFFT) takes "
                        "a complex spectrum"));
  out = RunOp(DftOp(false, false, 2), {{"x", real}}, {"y"});
  EXPECT_THAT(
      out.status().message(),
      HasSubstr("axis 2 is out of range for input \"X\" (variable "
                "\"x\", shape [1, 4, 1]): expected [-3, -2] or [0, 1]"));
  out = RunOp(DftOp(false, false, 1, false, true),
              {{"x", real}, {"a", MakeTensor<int64_t>({}, {-1})}}, {"y"});
  EXPECT_THAT(out.status().message(), HasSubstr("axis -1 is out of range"));
  out = RunOp(DftOp(false, false, 1, true),
              {{"x", real}, {"n", MakeTensor<int64_t>({}, {0})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("dft_length = 0: expected a length >= 1"));
  out = RunOp(DftOp(true, true), {{"x", MakeTensor<float>({1, 1, 2}, {1, 0})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("has 1 values along axis 1: too few for a transform "
                        "without dft_length"));
  out = RunOp(DftOp(false, false, 1, true),
              {{"x", real}, {"n", MakeTensor<float>({}, {4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"DftLength\" (variable \"n\") has dtype "
                        "float32"));
  out = RunOp(DftOp(false, false),
              {{"x", MakeTensor<int32_t>({1, 4, 1}, {1, 2, 3, 4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\") has dtype int32"));
}

}  // namespace
}  // namespace scopeflow
