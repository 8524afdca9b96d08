// The tfidf_vectorizer op against n-grams counted by hand, in each mode, and
// its errors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Pool: unigrams 2, 3 (positions 0, 1), bigrams (5, 4), (5, 6) (positions
// 2, 3).
std::string TfIdfOp(const std::string& mode, int min, int max, int skip,
                    const std::vector<float>& weights = {},
                    const std::vector<int64_t>& counts = {0, 2}) {
  std::string text = absl::StrCat(
      R"pb(type: "tfidf_vectorizer"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" }
           attrs { name: "mode" s: ")pb",
      mode, R"pb(" }
                 attrs { name: "min_gram_length" i:)pb",
      min, R"pb(}
                attrs { name: "max_gram_length" i: )pb",
      max, R"pb(}
                attrs { name: "max_skip_count" i: )pb",
      skip, R"pb(}
                 attrs { name: "ngram_counts" i64s { values: [ )pb",
      absl::StrJoin(counts, ", "),
      R"pb(            ] }
                       }
            attrs { name: "ngram_indexes" i64s { values: [ 0, 1, 2, 3 ] } }
            attrs { name: "pool" i64s { values: [ 2, 3, 5, 4, 5, 6 ] } })pb");
  if (!weights.empty()) {
    absl::StrAppend(
        &text,
        R"pb(              attrs { name: "weights" floats { values: [)pb",
        absl::StrJoin(weights, ", "), " ] } }");
  }
  return text;
}

// [5, 2, 4, 5, 6, 3, 2]: unigrams 2 twice and 3 once; bigram (5, 6)
// adjacent at 3, 4 and four apart at 0, 4; (5, 4) two apart at 0, 2.
Tensor Tokens() { return MakeTensor<int64_t>({7}, {5, 2, 4, 5, 6, 3, 2}); }

TEST(TfIdfVectorizerTest, UnigramsAndBigramsWithSkips) {
  auto out = RunOp(TfIdfOp("TF", 1, 2, 0), {{"x", Tokens()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(4));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 0, 1));
  // Skip 1 adds the pairs two apart: (5, 4) at 0, 2.
  out = RunOp(TfIdfOp("TF", 1, 2, 1), {{"x", Tokens()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 1, 1));
  // Bigrams only: skip 2 reaches three apart, skip 3 four apart, adding
  // (5, 6) at 0, 4.
  out = RunOp(TfIdfOp("TF", 2, 2, 2), {{"x", Tokens()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0, 1, 1));
  out = RunOp(TfIdfOp("TF", 2, 2, 3), {{"x", Tokens()}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0, 1, 2));
}

TEST(TfIdfVectorizerTest, ModesAndBatches) {
  const Tensor batch = MakeTensor<int32_t>({2, 3}, {2, 2, 3,  //
                                                    5, 6, 9});
  auto out = RunOp(TfIdfOp("TF", 1, 2, 0), {{"x", batch}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 4));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(2, 1, 0, 0, 0, 0, 0, 1));
  out = RunOp(TfIdfOp("IDF", 1, 2, 0, {0.5, 2, 3, 4}), {{"x", batch}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0.5, 2, 0, 0, 0, 0, 0, 4));
  out = RunOp(TfIdfOp("IDF", 1, 2, 0), {{"x", batch}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 1, 0, 0, 0, 0, 0, 1));
  out = RunOp(TfIdfOp("TFIDF", 1, 2, 0, {0.5, 2, 3, 4}), {{"x", batch}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 0, 0, 0, 0, 0, 4));
}

TEST(TfIdfVectorizerTest, BadAttributesAndInputsAreNamed) {
  auto out = RunOp(TfIdfOp("TF", 2, 1, 0), {{"x", Tokens()}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("min_gram_length 2 and max_gram_length 1: expected 1 "
                        "<= min <= max"));
  out = RunOp(TfIdfOp("TF", 1, 2, 0, {}, {0, 3}), {{"x", Tokens()}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("ngram_counts[1] = 3: the 2-grams' part of the pool, "
                        "[3, 6) of 6 values, must be whole 2-grams"));
  out = RunOp(TfIdfOp("TFIDF", 1, 2, 0, {1, 2}), {{"x", Tokens()}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("weights has 2 values: expected one per output "
                        "position (4)"));
  out = RunOp(TfIdfOp("BM25", 1, 2, 0), {{"x", Tokens()}}, {"y"});
  EXPECT_FALSE(out.ok());
  out = RunOp(TfIdfOp("TF", 1, 2, 0),
              {{"x", MakeTensor<float>({3}, {2, 3, 5})}}, {"y"});
  EXPECT_THAT(out.status().message(),
              HasSubstr("input \"X\" (variable \"x\") has dtype float32"));
}

}  // namespace
}  // namespace scopeflow
