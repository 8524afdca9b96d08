// The ops a QOperator model (ONNX Runtime's quantization tools) runs on its
// uint8 and int8 activations between QLinearConv and QLinearMatMul:
// reshape, flatten, squeeze/unsqueeze, transpose, concat, split, slice,
// gather, pad, expand, tile and max pooling, each moving the bytes as they
// are (hand-computed results), and the errors of the ones that cannot.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// "type" from X = x to Out = y with `attrs`.
std::string XToY(const std::string& type, const std::string& attrs = "") {
  return absl::StrCat("type: \"", type,
                      "\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
                      "\"Out\" vars: \"y\" } ",
                      attrs);
}

template <typename T>
std::vector<T> RunXToY(const std::string& op, const Tensor& x,
                       std::vector<int64_t>* dims = nullptr) {
  auto out = RunOp(op, {{"x", x}}, {"y"});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  if (dims != nullptr)
    dims->assign((*out)[0].dims().begin(), (*out)[0].dims().end());
  EXPECT_EQ((*out)[0].dtype(), x.dtype());
  return Values<T>((*out)[0]);
}

TEST(QuantizedImagesTest, ViewsKeepTheBytes) {
  const Tensor x =
      MakeTensor<uint8_t>({1, 2, 1, 3}, {0, 1, 128, 200, 254, 255});
  std::vector<int64_t> dims;
  EXPECT_THAT(RunXToY<uint8_t>(XToY("flatten", "attrs { name: \"axis\" i: 1 }"),
                               x, &dims),
              ElementsAre(0, 1, 128, 200, 254, 255));
  EXPECT_THAT(dims, ElementsAre(1, 6));
  EXPECT_THAT(RunXToY<uint8_t>(XToY("reshape",
                                    "attrs { name: \"shape\" ints { "
                                    "values: [3, 2] } }"),
                               x, &dims),
              ElementsAre(0, 1, 128, 200, 254, 255));
  EXPECT_THAT(dims, ElementsAre(3, 2));
  EXPECT_THAT(RunXToY<uint8_t>(XToY("squeeze",
                                    "attrs { name: \"axes\" ints { "
                                    "values: [0, 2] } }"),
                               x, &dims),
              ElementsAre(0, 1, 128, 200, 254, 255));
  EXPECT_THAT(dims, ElementsAre(2, 3));
}

TEST(QuantizedImagesTest, TransposesInt8) {
  // [2, 3] -> [3, 2].
  const Tensor x = MakeTensor<int8_t>({2, 3}, {-128, -1, 0, 1, 100, 127});
  std::vector<int64_t> dims;
  EXPECT_THAT(RunXToY<int8_t>(XToY("transpose",
                                   "attrs { name: \"perm\" ints "
                                   "{ values: [1, 0] } }"),
                              x, &dims),
              ElementsAre(-128, 1, -1, 100, 0, 127));
  EXPECT_THAT(dims, ElementsAre(3, 2));
}

TEST(QuantizedImagesTest, ConcatenatesAndSplitsUint8) {
  const Tensor a = MakeTensor<uint8_t>({1, 1, 2}, {1, 2});
  const Tensor b = MakeTensor<uint8_t>({1, 2, 2}, {250, 251, 252, 253});
  auto joined = RunOp(
      "type: \"concat\" inputs { slot: \"X\" vars: \"a\" vars: \"b\" } "
      "outputs { slot: \"Out\" vars: \"y\" } attrs { name: \"axis\" i: 1 }",
      {{"a", a}, {"b", b}}, {"y"});
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_THAT((*joined)[0].dims(), ElementsAre(1, 3, 2));
  EXPECT_THAT(Values<uint8_t>((*joined)[0]),
              ElementsAre(1, 2, 250, 251, 252, 253));
  auto parts = RunOp(
      "type: \"split\" inputs { slot: \"X\" vars: \"x\" } outputs { slot: "
      "\"Out\" vars: \"p\" vars: \"q\" } attrs { name: \"axis\" i: 2 } attrs "
      "{ name: \"num\" i: 2 }",
      {{"x", b}}, {"p", "q"});
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_THAT(Values<uint8_t>((*parts)[0]), ElementsAre(250, 252));
  EXPECT_THAT(Values<uint8_t>((*parts)[1]), ElementsAre(251, 253));
}

TEST(QuantizedImagesTest, SlicesGathersAndTilesInt8) {
  const Tensor x = MakeTensor<int8_t>({2, 3}, {-3, -2, -1, 4, 5, 6});
  EXPECT_THAT(RunXToY<int8_t>(XToY("slice",
                                   "attrs { name: \"axes\" ints { values: [1] "
                                   "} } attrs { name: \"starts\" ints { "
                                   "values: [1] } } attrs { name: \"ends\" "
                                   "ints { values: [3] } }"),
                              x),
              ElementsAre(-2, -1, 5, 6));
  auto gathered = RunOp(
      "type: \"gather\" inputs { slot: \"X\" vars: \"x\" } inputs { slot: "
      "\"Index\" vars: \"i\" } outputs { slot: \"Out\" vars: \"y\" }",
      {{"x", x}, {"i", MakeTensor<int64_t>({2}, {1, 0})}}, {"y"});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  EXPECT_THAT(Values<int8_t>((*gathered)[0]), ElementsAre(4, 5, 6, -3, -2, -1));
  EXPECT_THAT(RunXToY<int8_t>(XToY("tile",
                                   "attrs { name: \"repeat_times\" ints { "
                                   "values: [1, 2] } }"),
                              MakeTensor<int8_t>({1, 2}, {-7, 7})),
              ElementsAre(-7, 7, -7, 7));
}

TEST(QuantizedImagesTest, PadsWithTheZeroPoint) {
  // A quantized image pads with its zero point (here 128), not 0.
  const Tensor x = MakeTensor<uint8_t>({1, 2}, {10, 20});
  EXPECT_THAT(RunXToY<uint8_t>(XToY("pad",
                                    "attrs { name: \"paddings\" ints { values: "
                                    "[0, 0, 1, 1] } } attrs { name: "
                                    "\"pad_value\" f: 128 }"),
                               x),
              ElementsAre(128, 10, 20, 128));
  EXPECT_THAT(RunXToY<int8_t>(XToY("pad",
                                   "attrs { name: \"paddings\" ints { values: "
                                   "[0, 0, 1, 0] } } attrs { name: "
                                   "\"pad_value\" f: -128 }"),
                              MakeTensor<int8_t>({1, 1}, {5})),
              ElementsAre(-128, 5));
  for (const char* value : {"256", "-1"}) {
    auto out = RunOp(XToY("pad", absl::StrCat("attrs { name: \"paddings\" ints "
                                              "{ values: [0, 0, 1, 1] } } "
                                              "attrs { name: \"pad_value\" f: ",
                                              value, " }")),
                     {{"x", x}}, {"y"});
    EXPECT_THAT(out.status().message(),
                HasSubstr(absl::StrCat("does not fit the dtype uint8")))
        << value;
  }
}

TEST(QuantizedImagesTest, MaxPoolsNegativeInt8) {
  // Every value below 0: a maximum that started from 0 would be wrong.
  const Tensor x = MakeTensor<int8_t>({1, 1, 2, 2}, {-100, -5, -128, -7});
  const std::string pool = XToY(
      "pool2d",
      "attrs { name: \"pooling_type\" s: \"max\" } attrs { name: \"ksize\" "
      "ints { values: [2, 2] } } attrs { name: \"strides\" ints { values: "
      "[2, 2] } }");
  EXPECT_THAT(RunXToY<int8_t>(pool, x), ElementsAre(-5));
  const Tensor u = MakeTensor<uint8_t>({1, 1, 2, 3}, {0, 9, 255, 3, 4, 5});
  EXPECT_THAT(
      RunXToY<uint8_t>(XToY("pool2d",
                            "attrs { name: \"pooling_type\" s: \"max\" } "
                            "attrs { name: \"ksize\" ints { values: [2, 2] } "
                            "}"),
                       u),
      ElementsAreArray(std::vector<uint8_t>{9, 255}));
}

TEST(QuantizedImagesTest, AveragePoolingOfIntegersIsAnError) {
  auto out =
      RunOp(XToY("pool2d",
                 "attrs { name: \"pooling_type\" s: \"avg\" } attrs { "
                 "name: \"ksize\" ints { values: [2, 2] } }"),
            {{"x", MakeTensor<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("average pooling takes float32 or float64; uint8 "
                        "images pool with \"max\" only"));
}

}  // namespace
}  // namespace scopeflow
