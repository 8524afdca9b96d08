// einsum: values against torch.einsum (torch 1.13), gradients against
// central differences, and the errors of malformed equations.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/grad_check.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string EinsumOp(const std::string& equation, int operands) {
  std::string op = R"pb(type: "einsum" inputs { slot: "Operands")pb";
  for (int i = 0; i < operands; ++i) absl::StrAppend(&op, " vars: \"x", i, "\"");
  absl::StrAppend(&op, R"pb( } outputs { slot: "Out" vars: "y" }
                           attrs { name: "equation" s: ")pb",
                  equation, "\" }");
  return op;
}

// ((i * seed + 3) mod 11 - 5) / 4: exact in binary, so products and sums
// of a few are exact too. The torch values below come from these inputs
// (seed 3 + 2 k for operand k).
std::vector<double> Formula(int64_t n, int seed) {
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = ((i * seed + 3) % 11 - 5) / 4.0;
  return values;
}

int64_t NumElements(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

struct TorchCase {
  std::string equation;
  std::vector<Dims> shapes;
  Dims out_shape;
  std::vector<double> out;
};

// torch.einsum(equation, *operands) for each case.
const std::vector<TorchCase>& TorchCases() {
  static const auto* cases = new std::vector<TorchCase>{
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 2}}, {2, 2, 2},
       {-0.9375, 0.0, 0.1875, -0.75, -2.5, 0.1875, -3.0, 0.5625}},
      {"bhqd,bhkd->bhqk", {{1, 2, 2, 3}, {1, 2, 3, 3}}, {1, 2, 2, 3},
       {-0.3125, -0.25, 1.875, -0.0625, -0.125, 1.875, -1.0625, 1.5, -1.4375,
        -1.1875, 1.25, -0.4375}},
      {"ij->ji", {{2, 3}}, {3, 2}, {-0.5, -1.0, 0.25, -0.25, 1.0, 0.5}},
      {"ii->i", {{3, 3}}, {3}, {-0.5, -0.25, 0.0}},
      {"ij->", {{2, 3}}, {}, {0.0}},
      {"i,i", {{4}, {4}}, {}, {-0.8125}},
      {"ij,jk", {{2, 3}, {3, 2}}, {2, 2}, {-0.9375, 0.0, 0.1875, -0.75}},
      {"...ij,...jk->...ik", {{1, 2, 2}, {3, 2, 2}}, {3, 2, 2},
       {0.0625, -0.25, 0.25, 0.25, 0.1875, -0.125, 0.25, 0.25, -0.375, 0.0,
        0.25, 0.25}},
      {"bii->bi", {{2, 3, 3}}, {2, 3}, {-0.5, -0.25, 0.0, 0.75, 1.0, 1.25}},
      {"ij,jk,kl->il", {{2, 3}, {3, 2}, {2, 2}}, {2, 2},
       {0.46875, -1.171875, -0.28125, 0.796875}},
      {"i,j->ij", {{2}, {3}}, {2, 3},
       {0.25, -0.375, 0.375, -0.125, 0.1875, -0.1875}},
      {"ba", {{2, 3}}, {3, 2}, {-0.5, -1.0, 0.25, -0.25, 1.0, 0.5}},
      {"...ii->...i", {{2, 2, 2}}, {2, 2}, {-0.5, -1.0, -0.25, -0.75}},
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}, {2, 2},
       {-0.9375, 0.0, 1.0625, -0.1875}},
  };
  return *cases;
}

std::vector<Feed> Operands(const TorchCase& c) {
  std::vector<Feed> feeds;
  for (size_t k = 0; k < c.shapes.size(); ++k) {
    feeds.push_back({absl::StrCat("x", k),
                     MakeTensor<double>(c.shapes[k],
                                        Formula(NumElements(c.shapes[k]),
                                                3 + 2 * static_cast<int>(k)))});
  }
  return feeds;
}

TEST(EinsumTest, MatchesTorch) {
  for (const TorchCase& c : TorchCases()) {
    SCOPED_TRACE(c.equation);
    auto out = RunOp(EinsumOp(c.equation, c.shapes.size()), Operands(c), {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].dims(), c.out_shape);
    EXPECT_EQ(Values<double>((*out)[0]), c.out);
  }
}

TEST(EinsumTest, Float32AndIntegers) {
  auto out = RunOp(EinsumOp("ij,jk->ik", 2),
                   {{"x0", MakeTensor<int64_t>({2, 2}, {1, 2, 3, 4})},
                    {"x1", MakeTensor<int64_t>({2, 2}, {5, 6, 7, 8})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(19, 22, 43, 50));
  auto floats = RunOp(EinsumOp("bij,bkj->bik", 2),
                      {{"x0", MakeTensor<float>({1, 2, 2}, {1, 2, 3, 4})},
                       {"x1", MakeTensor<float>({1, 2, 2}, {5, 6, 7, 8})}},
                      {"y"});
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_THAT(Values<float>((*floats)[0]), ElementsAre(17, 23, 39, 53));
  auto sums = RunOp(EinsumOp("ij->j", 1),
                    {{"x0", MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})}},
                    {"y"});
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_THAT(Values<int32_t>((*sums)[0]), ElementsAre(5, 7, 9));
}

TEST(EinsumTest, EmptyDimensions) {
  // Contracting over a length of 0 gives zeros.
  auto out = RunOp(EinsumOp("ij,jk->ik", 2),
                   {{"x0", MakeTensor<float>({2, 0}, {})},
                    {"x1", MakeTensor<float>({0, 3}, {})}},
                   {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(EinsumTest, GradientsOfEveryOperand) {
  for (const TorchCase& c : TorchCases()) {
    SCOPED_TRACE(c.equation);
    std::vector<Feed> feeds = Operands(c);
    std::vector<std::string> names;
    for (size_t k = 0; k < feeds.size(); ++k) {
      feeds[k].tensor = MakeTensor<double>(
          c.shapes[k], RandomValues(NumElements(c.shapes[k]), 10 + k));
      names.push_back(feeds[k].name);
    }
    const absl::Status status = CheckGradientTogetherAndAlone(
        EinsumOp(c.equation, c.shapes.size()), feeds, names);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(EinsumTest, UnknownDimsAtPrepare) {
  auto info = InferAtPrepare(EinsumOp("bij,bjk->bik", 2),
                             {{"x0", kFloat32, {-1, 4, 5}},
                              {"x1", kFloat32, {-1, 5, 6}}},
                             "y");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_THAT(info->dims, ElementsAre(-1, 4, 6));
}

TEST(EinsumTest, MalformedEquationsAreErrors) {
  const Tensor m = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  struct Case {
    std::string equation;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik",
       "equation \"ij,jk->ik\" has 2 input terms: expected one per operand, "
       "1"},
      {"ijk->ik", "term \"ijk\" has 3 labels for operand 0 of rank 2"},
      {"i1->i", "character '1' in term \"i1\""},
      {"ij->ik", "output label 'k' is in no input term"},
      {"ij->ii", "output label 'i' appears twice"},
      {"ij->...i", "the output has an ellipsis but no input term does"},
      {"ii->i", "label i has size 3 in operand 0 (shape [2, 3]) but 2 "
                "elsewhere (expected one size)"},
      {"i..j..->ij", "a '.' outside an ellipsis"},
      {"ij->i->j", "expected one \"->\" followed by one output term"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    const absl::Status status = PrepareOp(EinsumOp(c.equation, 1), {{"x0", m}});
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat("op 0 (einsum): attribute \"equation\" "
                                       "= \"",
                                       c.equation,
                                       "\" for input \"Operands\" of shapes "
                                       "[2, 3]: ")));
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.expected));
  }
  const absl::Status status =
      PrepareOp(EinsumOp("ij,jk", 2),
                {{"x0", m}, {"x1", MakeTensor<double>({3, 1}, {1, 2, 3})}});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("operand 1 of input \"Operands\" (variable \"x1\") "
                        "has dtype float64: expected float32, the dtype of "
                        "operand 0"));
}

}  // namespace
}  // namespace scopeflow
