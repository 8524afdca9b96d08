// transfer_layout: hand-computed images in each layout, batches checked by
// each layout's index arithmetic, round trips, shape inference with
// unknown dims, every error, and its gradient.
#include <array>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/grad_check.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "operators/channel_blocks_testing.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using Sizes = ImageSizes;

// The image [1, 16, 2, 3] whose element (c, h, w) is 100c + 10h + w, in
// each layout.
constexpr Sizes kSmall = {1, 16, 2, 3};

constexpr int32_t kSmallNchw[] = {
    0,    1,    2,    10,   11,   12,    //
    100,  101,  102,  110,  111,  112,   //
    200,  201,  202,  210,  211,  212,   //
    300,  301,  302,  310,  311,  312,   //
    400,  401,  402,  410,  411,  412,   //
    500,  501,  502,  510,  511,  512,   //
    600,  601,  602,  610,  611,  612,   //
    700,  701,  702,  710,  711,  712,   //
    800,  801,  802,  810,  811,  812,   //
    900,  901,  902,  910,  911,  912,   //
    1000, 1001, 1002, 1010, 1011, 1012,  //
    1100, 1101, 1102, 1110, 1111, 1112,  //
    1200, 1201, 1202, 1210, 1211, 1212,  //
    1300, 1301, 1302, 1310, 1311, 1312,  //
    1400, 1401, 1402, 1410, 1411, 1412,  //
    1500, 1501, 1502, 1510, 1511, 1512,
};

// One row of 16 channels per pixel.
constexpr int32_t kSmallNhwc[] = {
    0,   100, 200,  300,  400,  500,  600,  700,
    800, 900, 1000, 1100, 1200, 1300, 1400, 1500,  //
    1,   101, 201,  301,  401,  501,  601,  701,
    801, 901, 1001, 1101, 1201, 1301, 1401, 1501,  //
    2,   102, 202,  302,  402,  502,  602,  702,
    802, 902, 1002, 1102, 1202, 1302, 1402, 1502,  //
    10,  110, 210,  310,  410,  510,  610,  710,
    810, 910, 1010, 1110, 1210, 1310, 1410, 1510,  //
    11,  111, 211,  311,  411,  511,  611,  711,
    811, 911, 1011, 1111, 1211, 1311, 1411, 1511,  //
    12,  112, 212,  312,  412,  512,  612,  712,
    812, 912, 1012, 1112, 1212, 1312, 1412, 1512,
};

// One row of 8 channels per pixel: block 0 (channels 0-7) for the six
// pixels, then block 1 (channels 8-15).
constexpr int32_t kSmallBlocked[] = {
    0,   100, 200,  300,  400,  500,  600,  700,   //
    1,   101, 201,  301,  401,  501,  601,  701,   //
    2,   102, 202,  302,  402,  502,  602,  702,   //
    10,  110, 210,  310,  410,  510,  610,  710,   //
    11,  111, 211,  311,  411,  511,  611,  711,   //
    12,  112, 212,  312,  412,  512,  612,  712,   //
    800, 900, 1000, 1100, 1200, 1300, 1400, 1500,  //
    801, 901, 1001, 1101, 1201, 1301, 1401, 1501,  //
    802, 902, 1002, 1102, 1202, 1302, 1402, 1502,  //
    810, 910, 1010, 1110, 1210, 1310, 1410, 1510,  //
    811, 911, 1011, 1111, 1211, 1311, 1411, 1511,  //
    812, 912, 1012, 1112, 1212, 1312, 1412, 1512,
};

std::vector<int32_t> SmallImageIn(const std::string& format) {
  if (format == "NCHW") return {std::begin(kSmallNchw), std::end(kSmallNchw)};
  // In 16-channel blocks, the one sample's 16 channels make a single block
  // of [H, W, 16]: the same values in the same order as NHWC.
  if (format == "NHWC" || format == "NCHW16c") {
    return {std::begin(kSmallNhwc), std::end(kSmallNhwc)};
  }
  return {std::begin(kSmallBlocked), std::end(kSmallBlocked)};
}

TEST(TransferLayoutTest, HandComputedImageBetweenEveryPair) {
  for (const std::string src : kImageFormats) {
    for (const std::string dst : kImageFormats) {
      SCOPED_TRACE(src + " to " + dst);
      auto out = RunOp(
          TransferLayoutOp(src, dst),
          {{"x", MakeTensor<int32_t>(DimsIn(src, kSmall), SmallImageIn(src))}},
          {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_THAT((*out)[0].dims(), ElementsAreArray(DimsIn(dst, kSmall)));
      EXPECT_THAT(Values<int32_t>((*out)[0]),
                  ElementsAreArray(SmallImageIn(dst)));
    }
  }
}

TEST(TransferLayoutTest, DefaultFormatsCopyNchw) {
  auto out = RunOp(
      R"pb(type: "transfer_layout"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" })pb",
      {{"x", MakeTensor<bool>({1, 2, 1, 2}, {true, false, false, true})}},
      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 1, 2));
  EXPECT_THAT(Values<bool>((*out)[0]), ElementsAre(true, false, false, true));
}

// Several samples and blocks, large enough to be copied on several threads
// where more than one is available: each element (n, c, h, w) holds its
// NCHW index and must land where the destination layout puts it.
TEST(TransferLayoutTest, BatchesMatchIndexArithmetic) {
  for (const Sizes s : {Sizes{2, 48, 3, 5}, Sizes{3, 64, 17, 19}}) {
    for (const std::string src : kImageFormats) {
      const Tensor x = NchwOffsetsIn<double>(src, s);
      for (const std::string dst : kImageFormats) {
        SCOPED_TRACE(absl::StrFormat("%s to %s, C = %d", src, dst, s.c));
        auto out = RunOp(TransferLayoutOp(src, dst), {{"x", x}}, {"y"});
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_THAT((*out)[0].dims(), ElementsAreArray(DimsIn(dst, s)));
        EXPECT_EQ(CountNotAtNchwOffset(Values<double>((*out)[0]), dst, s), 0);
      }
    }
  }
}

// Values in [-10, 10): both signs for integers, both values for bools.
template <typename T>
Tensor RandomImage(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-10, 10);
  std::vector<T> values(NumElements(dims));
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = uniform(rng);
    if constexpr (std::is_same_v<T, bool>) {
      values[i] = v > 0;
    } else {
      values[i] = static_cast<T>(v);
    }
  }
  return MakeTensor<T>(dims, values);
}

template <typename T>
void ExpectRoundTrips() {
  constexpr Sizes kSizes = {3, 16, 4, 5};
  uint32_t seed = 1;
  for (const std::string src : kImageFormats) {
    for (const std::string dst : kImageFormats) {
      SCOPED_TRACE(absl::StrFormat("%s to %s and back, dtype %s", src, dst,
                                   DataTypeName(DataTypeOf<T>())));
      const Tensor x = RandomImage<T>(DimsIn(src, kSizes), seed++);
      auto there = RunOp(TransferLayoutOp(src, dst), {{"x", x}}, {"y"});
      ASSERT_TRUE(there.ok()) << there.status();
      EXPECT_EQ((*there)[0].dtype(), DataTypeOf<T>());
      EXPECT_THAT((*there)[0].dims(), ElementsAreArray(DimsIn(dst, kSizes)));
      auto back =
          RunOp(TransferLayoutOp(dst, src), {{"x", (*there)[0]}}, {"y"});
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_THAT((*back)[0].dims(), ElementsAreArray(x.dims()));
      EXPECT_EQ(Values<T>((*back)[0]), Values<T>(x));
    }
  }
}

TEST(TransferLayoutTest, RoundTripsOnRandomDataForEveryPairAndDtype) {
  ExpectRoundTrips<float>();
  ExpectRoundTrips<double>();
  ExpectRoundTrips<int32_t>();
  ExpectRoundTrips<int64_t>();
  ExpectRoundTrips<bool>();
}

TEST(TransferLayoutTest, EmptyImages) {
  auto out = RunOp(TransferLayoutOp("NCHW8c", "NHWC"),
                   {{"x", MakeTensor<float>({0, 2, 3, 4, 8}, {})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(0, 3, 4, 16));
  // No channels: 0 is a multiple of 8.
  out = RunOp(TransferLayoutOp("NCHW", "NCHW8c"),
              {{"x", MakeTensor<float>({1, 0, 2, 2}, {})}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 0, 2, 2, 8));
}

TEST(TransferLayoutTest, UnknownDimsAtPrepare) {
  struct Case {
    std::string src, dst;
    std::vector<int64_t> x;
    std::vector<int64_t> out;
  };
  const std::vector<Case> cases = {
      {"NCHW", "NCHW8c", {-1, 16, 2, 3}, {-1, 2, 2, 3, 8}},
      {"NCHW8c", "NCHW", {-1, 2, 2, 3, 8}, {-1, 16, 2, 3}},
      {"NHWC", "NCHW8c", {-1, 2, 3, 16}, {-1, 2, 2, 3, 8}},
      {"NCHW8c", "NHWC", {-1, 2, 2, 3, 8}, {-1, 2, 3, 16}},
      {"NCHW", "NHWC", {-1, 16, 2, 3}, {-1, 2, 3, 16}},
      {"NHWC", "NCHW", {-1, 2, 3, 16}, {-1, 16, 2, 3}},
      {"NCHW8c", "NCHW8c", {-1, 2, 2, 3, 8}, {-1, 2, 2, 3, 8}},
      {"NCHW", "NCHW16c", {-1, 32, 2, 3}, {-1, 2, 2, 3, 16}},
      {"NCHW16c", "NHWC", {-1, 2, 2, 3, 16}, {-1, 2, 3, 32}},
      {"NCHW8c", "NCHW16c", {-1, 4, 2, 3, 8}, {-1, 2, 2, 3, 16}},
      {"NCHW16c", "NCHW8c", {-1, 2, 2, 3, 16}, {-1, 4, 2, 3, 8}},
      // Unknown channels and blocks stay unknown; so may the last dim of
      // NCHW8c until the run.
      {"NCHW", "NCHW8c", {2, -1, 4, -1}, {2, -1, 4, -1, 8}},
      {"NCHW8c", "NHWC", {2, -1, 4, 5, 8}, {2, 4, 5, -1}},
      {"NCHW8c", "NCHW", {2, 3, 4, 5, -1}, {2, 24, 4, 5}},
      {"NCHW16c", "NCHW", {2, 3, 4, 5, -1}, {2, 48, 4, 5}},
      {"NCHW16c", "NCHW8c", {2, -1, 4, 5, 16}, {2, -1, 4, 5, 8}},
      // Unknown rank: the formats still give Out's.
      {"NCHW8c", "NHWC", {}, {-1, -1, -1, -1}},
      {"NHWC", "NCHW8c", {}, {-1, -1, -1, -1, 8}},
      {"NCHW", "NCHW16c", {}, {-1, -1, -1, -1, 16}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrFormat("%s to %s of [%s]", c.src, c.dst,
                                 absl::StrJoin(c.x, ", ")));
    auto info = InferAtPrepare(TransferLayoutOp(c.src, c.dst),
                               {{"x", kFloat32, c.x}}, "y");
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->dtype, kFloat32);
    EXPECT_THAT(info->dims, ElementsAreArray(c.out));
  }
  // Run with N unknown at Prepare.
  auto out = RunDeclared(
      TransferLayoutOp("NCHW", "NCHW8c"), {{"x", kInt32, {-1, 16, 2, 3}}},
      {{"x", MakeTensor<int32_t>({1, 16, 2, 3}, SmallImageIn("NCHW"))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 2, 2, 3, 8));
  EXPECT_THAT(Values<int32_t>((*out)[0]), ElementsAreArray(kSmallBlocked));
}

TEST(TransferLayoutTest, WrongRankForTheFormatNamesOpAndVariable) {
  absl::Status status =
      PrepareOp(TransferLayoutOp("NCHW", "NHWC"),
                {{"x", MakeTensor<float>({16, 2, 3}, std::vector<float>(96))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [16, 2, 3] has rank 3: expected rank 4, [N, C, H, W], "
                "for src_format \"NCHW\""));
  status = PrepareOp(
      TransferLayoutOp("NHWC", "NCHW"),
      {{"x", MakeTensor<float>({1, 2, 3, 16, 1}, std::vector<float>(96))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 2, 3, 16, 1] has rank 5: expected rank 4, [N, H, W, "
                "C], for src_format \"NHWC\""));
  // An NCHW image given as NCHW8c.
  status = PrepareOp(
      TransferLayoutOp("NCHW8c", "NCHW"),
      {{"x", MakeTensor<float>({1, 16, 2, 3}, std::vector<float>(96))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 16, 2, 3] has rank 4: expected rank 5, [N, C / 8, "
                "H, W, 8], for src_format \"NCHW8c\""));
  status = PrepareOp(
      TransferLayoutOp("NCHW16c", "NCHW"),
      {{"x", MakeTensor<float>({1, 16, 2, 3}, std::vector<float>(96))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 16, 2, 3] has rank 4: expected rank 5, [N, C / 16, "
                "H, W, 16], for src_format \"NCHW16c\""));
}

TEST(TransferLayoutTest, BlockedLastDimNotTheBlockNamesOpAndVariable) {
  const absl::Status status = PrepareOp(
      TransferLayoutOp("NCHW8c", "NHWC"),
      {{"x", MakeTensor<float>({1, 2, 2, 3, 4}, std::vector<float>(48))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 2, 2, 3, 4] has last dim 4: expected 8, [N, C / 8, "
                "H, W, 8], for src_format \"NCHW8c\""));
  // Known only at the run.
  auto out = RunDeclared(
      TransferLayoutOp("NCHW8c", "NCHW"), {{"x", kFloat32, {1, 2, 2, 3, -1}}},
      {{"x", MakeTensor<float>({1, 2, 2, 3, 4}, std::vector<float>(48))}},
      {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("(transfer_layout)"));
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\") of shape [1, 2, 2, 3, "
                        "4] has last dim 4: expected 8"));
  // An NCHW8c image given as NCHW16c.
  const absl::Status status16 = PrepareOp(
      TransferLayoutOp("NCHW16c", "NCHW8c"),
      {{"x", MakeTensor<float>({1, 2, 2, 3, 8}, std::vector<float>(96))}});
  EXPECT_THAT(
      status16.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 2, 2, 3, 8] has last dim 8: expected 16, [N, C / "
                "16, H, W, 16], for src_format \"NCHW16c\""));
}

TEST(TransferLayoutTest, ChannelsNotAMultipleOfTheBlockNameOpVariableAndCount) {
  absl::Status status = PrepareOp(
      TransferLayoutOp("NCHW", "NCHW8c"),
      {{"x", MakeTensor<float>({1, 12, 2, 3}, std::vector<float>(72))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 12, 2, 3] has 12 channels: expected a multiple of "
                "8 for dst_format \"NCHW8c\""));
  status = PrepareOp(
      TransferLayoutOp("NHWC", "NCHW8c"),
      {{"x", MakeTensor<float>({1, 2, 3, 20}, std::vector<float>(120))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 2, 3, 20] has 20 channels: expected a multiple of "
                "8 for dst_format \"NCHW8c\""));
  // Channels known only at the run.
  auto out = RunDeclared(
      TransferLayoutOp("NCHW", "NCHW8c"), {{"x", kFloat32, {-1, -1, -1, -1}}},
      {{"x", MakeTensor<float>({1, 12, 2, 3}, std::vector<float>(72))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("(transfer_layout)"));
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\") of shape [1, 12, 2, 3] "
                        "has 12 channels: expected a multiple of 8"));
  // A multiple of 8 is not enough for 16-channel blocks.
  status = PrepareOp(
      TransferLayoutOp("NCHW8c", "NCHW16c"),
      {{"x", MakeTensor<float>({1, 3, 2, 3, 8}, std::vector<float>(144))}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): input \"X\" (variable \"x\") of "
                "shape [1, 3, 2, 3, 8] has 24 channels: expected a multiple of "
                "16 for dst_format \"NCHW16c\""));
}

TEST(TransferLayoutTest, TooManyChannelBlocks) {
  // No elements (H is 0), but C = blocks * 8 does not fit in int64.
  const int64_t blocks = int64_t{1} << 61;
  auto info = InferAlone(TransferLayoutOp("NCHW8c", "NCHW"),
                         {{"x", kFloat32, {1, blocks, 0, 1, 8}}}, "y");
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.status().message(),
              HasSubstr(absl::StrFormat(
                  "input \"X\" (variable \"x\") of shape [1, %d, 0, 1, 8] has "
                  "%d channel blocks of 8: more channels than int64 holds",
                  blocks, blocks)));
  info = InferAlone(TransferLayoutOp("NCHW16c", "NCHW"),
                    {{"x", kFloat32, {1, blocks, 0, 1, 16}}}, "y");
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.status().message(),
              HasSubstr("channel blocks of 16: more channels than int64 "
                        "holds"));
}

TEST(TransferLayoutTest, UnknownFormatNamesOpAndAttribute) {
  const Tensor x = MakeTensor<float>({1, 8, 1, 1}, std::vector<float>(8));
  absl::Status status =
      PrepareOp(TransferLayoutOp("NC8HW", "NCHW"), {{"x", x}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): attribute \"src_format\" "
                "must be one of NCHW, NHWC, NCHW8c, NCHW16c, got \"NC8HW\""));
  status = PrepareOp(TransferLayoutOp("NCHW", "nhwc"), {{"x", x}});
  EXPECT_THAT(
      status.message(),
      HasSubstr("op 0 (transfer_layout): attribute \"dst_format\" "
                "must be one of NCHW, NHWC, NCHW8c, NCHW16c, got \"nhwc\""));
  // Inference alone, without Prepare's checks of the attributes, rejects
  // them too.
  for (const auto& [src, dst, attr, value] :
       std::vector<std::array<std::string, 4>>{
           {"NCHW4c", "NCHW", "src_format", "NCHW4c"},
           {"NHWC", "", "dst_format", ""}}) {
    auto info = InferAlone(TransferLayoutOp(src, dst),
                           {{"x", kFloat32, {1, 8, 1, 1}}}, "y");
    ASSERT_FALSE(info.ok());
    EXPECT_THAT(info.status().message(),
                HasSubstr(absl::StrFormat("attribute \"%s\" must be one of "
                                          "NCHW, NHWC, NCHW8c, NCHW16c, got "
                                          "\"%s\"",
                                          attr, value)));
  }
}

TEST(TransferLayoutTest, MissingKernelDtypeNamesTheOp) {
  const absl::Status status =
      PrepareOp(TransferLayoutOp("NCHW", "NHWC"),
                {{"x", MakeTensor<uint8_t>({1, 1, 1, 1}, {7})}});
  EXPECT_THAT(status.message(),
              HasSubstr("op 0 (transfer_layout): no kernel for dtype uint8 on "
                        "cpu (kernels there: bool, float32, float64, int32, "
                        "int64)"));
}

// A float64 tensor of `dims` with values uniform in [-1, 1).
Tensor RandomDoubles(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> values(NumElements(dims));
  for (double& v : values) v = uniform(rng);
  return MakeTensor<double>(dims, values);
}

TEST(TransferLayoutTest, NumericGradientForEveryPair) {
  constexpr Sizes kSizes = {2, 16, 2, 3};
  uint32_t seed = 1;
  for (const std::string src : kImageFormats) {
    for (const std::string dst : kImageFormats) {
      SCOPED_TRACE(src + " to " + dst);
      const absl::Status status =
          CheckGradient(TransferLayoutOp(src, dst),
                        {{"x", RandomDoubles(DimsIn(src, kSizes), seed++)}});
      EXPECT_TRUE(status.ok()) << status;
    }
  }
}

NetDef ParseNet(const std::string& text) {
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net))
      << text;
  net.set_format_version(kNetFormatVersion);
  return net;
}

// The gradient op is transfer_layout back: the hand-computed image moved
// to NCHW8c, with Out@GRAD the image itself in NCHW8c, gives X@GRAD the
// image in NCHW. The forward op leaves src_format to its default, which the
// gradient op's dst_format keeps.
TEST(TransferLayoutTest, GradientIsTheTransferBack) {
  NetDef net = ParseNet(
      "name: \"t\" blocks { vars { name: \"x\" dtype: DATA_TYPE_FLOAT32 "
      "shape: [1, 16, 2, 3] } vars { name: \"g\" dtype: DATA_TYPE_FLOAT32 "
      "shape: [1, 2, 2, 3, 8] } ops { type: \"transfer_layout\" inputs { "
      "slot: \"X\" vars: \"x\" } outputs { slot: \"Out\" vars: \"y\" } attrs "
      "{ name: \"dst_format\" s: \"NCHW8c\" } } }");
  auto grads = AppendGradients(net, {"y"}, {"g"}, {"x"});
  ASSERT_TRUE(grads.ok()) << grads.status();
  const OpDef& grad_op = net.blocks(0).ops(net.blocks(0).ops_size() - 1);
  EXPECT_EQ(grad_op.type(), "transfer_layout");
  ASSERT_EQ(grad_op.attrs_size(), 1);
  EXPECT_EQ(grad_op.attrs(0).name(), "src_format");
  EXPECT_EQ(grad_op.attrs(0).s(), "NCHW8c");
  ASSERT_EQ(grad_op.inputs_size(), 1);
  EXPECT_THAT(grad_op.inputs(0).vars(), ElementsAre("g"));
  ASSERT_EQ(grad_op.outputs_size(), 1);
  EXPECT_THAT(grad_op.outputs(0).vars(), ElementsAre((*grads)[0].grad));

  Executor executor;
  auto prepared = executor.Prepare(net, 0, CPUPlace());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const std::vector<float> blocked(std::begin(kSmallBlocked),
                                   std::end(kSmallBlocked));
  Scope scope;
  auto out = executor.Run(
      *prepared, scope,
      {{"x", MakeTensor<float>({1, 16, 2, 3}, std::vector<float>(96))},
       {"g", MakeTensor<float>({1, 2, 2, 3, 8}, blocked)}},
      {(*grads)[0].grad});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(1, 16, 2, 3));
  const std::vector<float> nchw(std::begin(kSmallNchw), std::end(kSmallNchw));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAreArray(nchw));
}

}  // namespace
}  // namespace scopeflow
