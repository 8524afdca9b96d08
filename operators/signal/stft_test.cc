// The stft op against numpy.fft over frames cut by hand (values pasted with
// the numpy call that gave them), its gradient to the signal and the window
// against central differences, and its errors.
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
using ::testing::HasSubstr;
using ::testing::Pointwise;

std::string StftOp(bool onesided, bool window, bool frame_length) {
  return absl::StrCat(
      R"pb(type: "stft"
           inputs { slot: "Signal" vars: "s" }
           inputs { slot: "FrameStep" vars: "step" })pb",
      window ? R"pb(inputs { slot: "Window" vars: "w" })pb" : "",
      frame_length ? R"pb(inputs { slot: "FrameLength" vars: "len" })pb" : "",
      R"pb(outputs { slot: "Out" vars: "y" }
           attrs { name: "onesided" b:)pb",
      onesided ? "true" : "false", " }");
}

Tensor Ramp() {
  return MakeTensor<double>({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
}

TEST(StftTest, WindowedOneSidedFrames) {
  // s = 0..7, step 2, w = [0.5, 1, 0.5, 0.25]:
  // [np.fft.rfft(s[2 f : 2 f + 4] * w) for f in range(3)]. Frame 0 by hand:
  // [0, 1, 1, 0.75], bin 0 = 2.75.
  auto out = RunOp(StftOp(true, true, false),
                   {{"s", Ramp()},
                    {"step", MakeTensor<int64_t>({}, {2})},
                    {"w", MakeTensor<double>({4}, {0.5, 1, 0.5, 0.25})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3, 3, 2));
  EXPECT_THAT(Values<double>((*out)[0]),
              Pointwise(DoubleNear(1e-12),
                        std::vector<double>{2.75, 0, -1, -0.25, -0.75, 0, 7.25,
                                            0, -1, -1.75, -1.25, 0, 11.75, 0,
                                            -1, -3.25, -1.75, 0}));
}

TEST(StftTest, ComplexSignalFullSpectrumOfAGivenLength) {
  // c = 0..7 + i [1, 0, -1, 2, 0.5, 0, 1, -2], step 2, length 3, no window:
  // [np.fft.fft(c[2 f : 2 f + 3]) for f in range(3)].
  auto out =
      RunOp(StftOp(false, false, true),
            {{"s", MakeTensor<float>({1, 8, 2}, {0, 1, 1, 0, 2, -1, 3, 2, 4,
                                                 0.5, 5, 0, 6, 1, 7, -2})},
             {"step", MakeTensor<int32_t>({}, {2})},
             {"len", MakeTensor<int64_t>({}, {3})}},
            {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 3, 3, 2));
  EXPECT_THAT(
      Values<float>((*out)[0]),
      Pointwise(testing::FloatNear(1e-5f),
                std::vector<float>{
                    3.0, 0.0, -0.6339746, 2.3660254, -2.3660254, 0.6339746, 9.0,
                    1.5, -0.2009619, -1.3839746, -2.7990381, -3.1160254, 15.0,
                    1.5, -2.3660254, 0.8660254, -0.6339746, -0.8660254}));
}

TEST(StftTest, ShapeWaitsForAFedStep) {
  auto info = InferAtPrepare(StftOp(true, true, false),
                             {{"s", kFloat32, {2, 100, 1}},
                              {"step", kInt64, {}},
                              {"w", kFloat32, {16}}},
                             "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(2, -1, -1, 2));
}

TEST(StftTest, GradientToSignalAndWindow) {
  for (bool onesided : {true, false}) {
    for (int64_t parts : {1, 2}) {
      if (onesided && parts == 2) continue;
      SCOPED_TRACE(absl::StrCat("onesided ", onesided, " parts ", parts));
      // Step 3 over length 11 with frames of 5: frames 0, 3 overlap, and
      // the last value belongs to no frame.
      const std::vector<Feed> feeds = {
          {"s",
           MakeTensor<double>({2, 11, parts}, RandomValues(22 * parts, 3))},
          {"step", MakeTensor<int64_t>({}, {3})},
          {"w", MakeTensor<double>({5}, RandomValues(5, 4))}};
      GradCheckOptions options;
      options.wrt = {"s", "w"};
      const absl::Status status = CheckGradientTogetherAndAlone(
          StftOp(onesided, true, false), feeds, {"s", "w"}, options);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

TEST(StftTest, BadInputsAreNamed) {
  const Tensor step = MakeTensor<int64_t>({}, {2});
  auto out =
      RunOp(StftOp(true, false, false),
            {{"s", MakeTensor<double>({1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
             {"step", step}},
            {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("is complex: a one-sided transform takes a real "
                        "signal"));
  out = RunOp(StftOp(true, false, false),
              {{"s", Ramp()}, {"step", MakeTensor<int64_t>({}, {0})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("frame_step = 0: expected a step >= 1"));
  out = RunOp(StftOp(true, true, true),
              {{"s", Ramp()},
               {"step", step},
               {"w", MakeTensor<double>({3}, {1, 1, 1})},
               {"len", MakeTensor<int64_t>({}, {4})}},
              {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("the window has 3 values: expected frame_length = 4"));
  out = RunOp(
      StftOp(true, false, true),
      {{"s", Ramp()}, {"step", step}, {"len", MakeTensor<int64_t>({}, {9})}},
      {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("frame_length = 9 is longer than input \"Signal\" "
                        "(variable \"s\", shape [1, 8, 1]): no frame fits"));
  out = RunOp(StftOp(true, false, false),
              {{"s", MakeTensor<double>({8, 1}, {0, 1, 2, 3, 4, 5, 6, 7})},
               {"step", step}},
              {"y"});
  EXPECT_FALSE(out.ok());
  out = RunOp(StftOp(true, true, false),
              {{"s", Ramp()},
               {"step", step},
               {"w", MakeTensor<float>({4}, {1, 1, 1, 1})}},
              {"y"});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace scopeflow
