#include "tools/serve_json.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "framework/float16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<TensorInfo> Inputs() {
  return {
      TensorInfo{"x", kFloat32, {-1, 3}, true},
      TensorInfo{"ids", kInt32, {-1}, true},
      TensorInfo{"pixels", kUInt8, {2}, true},
      TensorInfo{"mask", kBool, {2}, true},
      TensorInfo{"half", kFloat16, {}, true},
      TensorInfo{"wide", kInt64, {}, false},
      TensorInfo{"precise", kFloat64, {1}, true},
  };
}

std::string ParseError(const std::string& body) {
  absl::StatusOr<std::vector<Feed>> feeds = ParsePredictJson(body, Inputs());
  EXPECT_FALSE(feeds.ok()) << body;
  EXPECT_EQ(feeds.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(feeds.status().message());
}

// A view of the feed's tensor.
Tensor Find(const std::vector<Feed>& feeds, const std::string& name) {
  for (const Feed& feed : feeds) {
    if (feed.name == name) return feed.tensor;
  }
  ADD_FAILURE() << "no feed " << name;
  return Tensor();
}

TEST(ServeJsonTest, ParsesEachDtype) {
  absl::StatusOr<std::vector<Feed>> feeds = ParsePredictJson(
      R"({"inputs": {"x": [[1, 2.5, -3e2], [0.1, 0, 7]], "ids": [-5, 2147483647],
          "pixels": [0, 255], "mask": [true, false], "half": 1.5,
          "wide": [[9007199254740993]], "precise": [0.1]},
          "signature_name": "serving_default"})",
      Inputs());
  ASSERT_TRUE(feeds.ok()) << feeds.status();
  ASSERT_EQ(feeds->size(), 7);
  const Tensor x = Find(*feeds, "x");
  EXPECT_EQ(x.dtype(), kFloat32);
  EXPECT_THAT(x.dims(), ElementsAre(2, 3));
  const float* xs = x.data<float>();
  EXPECT_THAT(std::vector<float>(xs, xs + 6),
              ElementsAre(1, 2.5, -300, 0.1f, 0, 7));
  const Tensor ids = Find(*feeds, "ids");
  EXPECT_EQ(ids.data<int32_t>()[0], -5);
  EXPECT_EQ(ids.data<int32_t>()[1], 2147483647);
  EXPECT_EQ(Find(*feeds, "pixels").data<uint8_t>()[1], 255);
  EXPECT_TRUE(Find(*feeds, "mask").data<bool>()[0]);
  EXPECT_FALSE(Find(*feeds, "mask").data<bool>()[1]);
  const Tensor half = Find(*feeds, "half");
  EXPECT_EQ(half.rank(), 0);
  EXPECT_EQ(HalfToFloat(half.data<float16>()[0]), 1.5f);
  // 2^53 + 1: exact in int64, not in a double.
  const Tensor wide = Find(*feeds, "wide");
  EXPECT_THAT(wide.dims(), ElementsAre(1, 1));
  EXPECT_EQ(wide.data<int64_t>()[0], 9007199254740993);
  EXPECT_EQ(Find(*feeds, "precise").data<double>()[0], 0.1);
}

TEST(ServeJsonTest, MalformedJsonSaysWhere) {
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, 2,]]}})"),
              HasSubstr("malformed JSON: parse error at line 1, column 25"));
  EXPECT_THAT(ParseError(""), HasSubstr("malformed JSON"));
}

TEST(ServeJsonTest, WrongBodyShapes) {
  EXPECT_THAT(ParseError("[1, 2]"),
              HasSubstr("the body is an array; expected an object"));
  EXPECT_THAT(ParseError(R"({"instances": [[1, 2, 3]]})"),
              HasSubstr("unknown field \"instances\" in the body"));
  EXPECT_THAT(ParseError("{}"), HasSubstr("the body has no \"inputs\""));
  EXPECT_THAT(ParseError(R"({"inputs": [[1, 2, 3]]})"),
              HasSubstr("\"inputs\" is an array; expected an object"));
}

TEST(ServeJsonTest, DuplicateKeysAndDeepNestingAreRefused) {
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, 2, 3]], "x": [[4, 5, 6]]}})"),
              HasSubstr("the JSON body gives key \"x\" twice in one "
                        "object"));
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, 2, 3]]}, "inputs": {}})"),
              HasSubstr("gives key \"inputs\" twice"));
  EXPECT_THAT(ParseError(std::string(100'000, '[')),
              HasSubstr("deeper than 24 levels (the limit)"));
}

TEST(ServeJsonTest, UnknownInputNamesTheInputs) {
  EXPECT_THAT(ParseError(R"({"inputs": {"y": [1]}})"),
              HasSubstr("unknown input \"y\" (the model's inputs: x, ids, "
                        "pixels, mask, half, wide, precise)"));
}

TEST(ServeJsonTest, ValuesOfTheWrongDtype) {
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, "2", 3]]}})"),
              HasSubstr("input \"x\": element [0][1] is a string (\"2\"); "
                        "dtype float32 needs numbers"));
  EXPECT_THAT(ParseError(R"({"inputs": {"ids": [1, 2.5]}})"),
              HasSubstr("input \"ids\": element [1] is a fraction (2.5); "
                        "dtype int32 needs integers"));
  EXPECT_THAT(ParseError(R"({"inputs": {"ids": [2147483648]}})"),
              HasSubstr("element [0] is an integer (2147483648); dtype int32 "
                        "needs integers from -2147483648 to 2147483647"));
  EXPECT_THAT(ParseError(R"({"inputs": {"pixels": [-1, 3]}})"),
              HasSubstr("dtype uint8 needs integers from 0 to 255"));
  EXPECT_THAT(ParseError(R"({"inputs": {"mask": [1, 0]}})"),
              HasSubstr("input \"mask\": element [0] is an integer (1); dtype "
                        "bool needs true or false"));
  EXPECT_THAT(ParseError(R"({"inputs": {"half": null}})"),
              HasSubstr("input \"half\": the value is null"));
}

TEST(ServeJsonTest, RaggedAndOverNestedArrays) {
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, 2, 3], [4, 5]]}})"),
              HasSubstr("input \"x\": ragged array: element [1] is an array "
                        "of 2, expected an array of 3"));
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, 2, 3], 4]}})"),
              HasSubstr("element [1] is an integer (4), expected an array"));
  EXPECT_THAT(ParseError(R"({"inputs": {"x": [[1, [2], 3]]}})"),
              HasSubstr("element [0][1] is an array; dtype float32 needs "
                        "numbers"));
  EXPECT_THAT(
      ParseError(R"({"inputs": {"x": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}})"),
      HasSubstr("input \"x\": arrays nested deeper than 16"));
}

TEST(ServeJsonTest, ResponsePrintsShortestExactValues) {
  Tensor probabilities;
  ASSERT_TRUE(probabilities.Allocate(CPUPlace(), kFloat32, {2, 2}).ok());
  float* p = probabilities.data<float>();
  p[0] = 0.1f;
  p[1] = 1e-8f;
  p[2] = std::numeric_limits<float>::quiet_NaN();
  p[3] = -INFINITY;
  Tensor labels;
  ASSERT_TRUE(labels.Allocate(CPUPlace(), kInt64, {2}).ok());
  labels.data<int64_t>()[0] = -3;
  labels.data<int64_t>()[1] = 9007199254740993;
  Tensor flag;
  ASSERT_TRUE(flag.Allocate(CPUPlace(), kBool, {}).ok());
  flag.data<bool>()[0] = true;
  EXPECT_EQ(PredictResponseJson(
                {TensorInfo{"p"}, TensorInfo{"label"}, TensorInfo{"flag"}},
                {probabilities, labels, flag}),
            R"({"outputs":{"p":[[0.1,1e-08],[null,null]],)"
            R"("label":[-3,9007199254740993],"flag":true}})");
}

TEST(ServeJsonTest, Int8InAndOut) {
  const std::vector<TensorInfo> inputs = {TensorInfo{"q", kInt8, {3}, true}};
  absl::StatusOr<std::vector<Feed>> feeds =
      ParsePredictJson(R"({"inputs": {"q": [-128, 0, 127]}})", inputs);
  ASSERT_TRUE(feeds.ok()) << feeds.status();
  const Tensor q = Find(*feeds, "q");
  EXPECT_EQ(q.dtype(), kInt8);
  EXPECT_EQ(q.data<int8_t>()[0], -128);
  EXPECT_EQ(q.data<int8_t>()[2], 127);
  EXPECT_EQ(PredictResponseJson({TensorInfo{"q"}}, {q}),
            R"({"outputs":{"q":[-128,0,127]}})");
  absl::StatusOr<std::vector<Feed>> out_of_range =
      ParsePredictJson(R"({"inputs": {"q": [128]}})", inputs);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_THAT(std::string(out_of_range.status().message()),
              HasSubstr("dtype int8 needs integers from -128 to 127"));
}

TEST(ServeJsonTest, ResponseRoundTripsThroughTheParser) {
  Tensor x;
  ASSERT_TRUE(x.Allocate(CPUPlace(), kFloat32, {1, 3}).ok());
  x.data<float>()[0] = 1.0f / 3;
  x.data<float>()[1] = 3.4028235e38f;
  x.data<float>()[2] = 1.4e-45f;
  const std::string out = PredictResponseJson({TensorInfo{"x"}}, {x});
  std::string body = out;
  body.replace(body.find("outputs"), 7, "inputs");
  absl::StatusOr<std::vector<Feed>> feeds = ParsePredictJson(body, Inputs());
  ASSERT_TRUE(feeds.ok()) << feeds.status() << " " << body;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*feeds)[0].tensor.data<float>()[i], x.data<float>()[i]);
  }
}

TEST(ServeJsonTest, MetadataHealthAndErrors) {
  EXPECT_EQ(
      ModelMetadataJson("mlp", 3,
                        {TensorInfo{"image", kFloat32, {-1, 64}, true}},
                        {TensorInfo{"p", kFloat32, {}, false}}),
      R"({"inputs":[{"dtype":"float32","name":"image","shape":[-1,64]}],)"
      R"("name":"mlp","outputs":[{"dtype":"float32","name":"p","shape":null}],)"
      R"("version":3})");
  EXPECT_EQ(HealthJson("mlp", 2),
            R"({"model":"mlp","status":"ok","version":2})");
  EXPECT_EQ(ErrorJson("input \"x\"\n"), R"({"error":"input \"x\"\n"})");
}

}  // namespace
}  // namespace scopeflow
