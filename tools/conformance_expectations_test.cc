#include "tools/conformance_expectations.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<CaseRecord> TwoCases() {
  return {{"test_b", "Size", Outcome::kUnsupported, Outcome::kUnsupported,
           "Size node 0: no converter"},
          {"test_a", "Abs", Outcome::kPass, Outcome::kPass, ""}};
}

TEST(ConformanceExpectationsTest, FormatThenParseGivesTheCasesByName) {
  const std::string text = FormatExpectations(TwoCases(), "the suite");
  EXPECT_THAT(text, HasSubstr("# Expected outcome of every case of the suite"));
  EXPECT_THAT(text, HasSubstr("test_a\tPASS\tPASS\tAbs\t\n"
                              "test_b\tUNSUPPORTED\tUNSUPPORTED\tSize\tSize "
                              "node 0: no converter\n"));
  absl::StatusOr<std::vector<CaseRecord>> parsed = ParseExpectations(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].name, "test_a");
  EXPECT_EQ((*parsed)[1].outcome, Outcome::kUnsupported);
  EXPECT_EQ((*parsed)[1].reason, "Size node 0: no converter");
}

TEST(ConformanceExpectationsTest, TabsAndNewlinesInReasonsStayOnOneLine) {
  std::vector<CaseRecord> records = {
      {"test_c", "Cast", Outcome::kFail, Outcome::kFail, "a\tb\nc"}};
  absl::StatusOr<std::vector<CaseRecord>> parsed =
      ParseExpectations(FormatExpectations(records, "s"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].reason, "a b c");
}

TEST(ConformanceExpectationsTest, BadLinesAreErrorsNamingTheLine) {
  EXPECT_THAT(ParseExpectations("# c\ntest_a\tPASS\n").status().message(),
              HasSubstr("line 2 has 2 tab-separated field(s)"));
  EXPECT_THAT(
      ParseExpectations("test_a\tPASSED\tPASS\tAbs\t\n").status().message(),
      HasSubstr("line 1 (case test_a): outcome \"PASSED\": expected PASS"));
  EXPECT_THAT(ParseExpectations("test_a\tPASS\tPASS\tAbs\t\n"
                                "test_a\tFAIL\tFAIL\tAbs\tx\n")
                  .status()
                  .message(),
              HasSubstr("line 2: case test_a is already on line 1"));
}

TEST(ConformanceExpectationsTest, MatchingRunHasNoDifferences) {
  EXPECT_THAT(ExpectationDifferences(TwoCases(), TwoCases()), IsEmpty());
}

TEST(ConformanceExpectationsTest, RegressionsAndUnexpectedPassesDiffer) {
  std::vector<CaseRecord> actual = TwoCases();
  actual[0].outcome = Outcome::kPass;         // test_b passes as written.
  actual[1].outcome_frozen = Outcome::kFail;  // test_a fails when frozen.
  actual[1].reason = "output 0 differs";
  EXPECT_THAT(
      ExpectationDifferences(TwoCases(), actual),
      ElementsAre(
          "test_b (as written): PASS, expected UNSUPPORTED (unexpected pass): "
          "Size node 0: no converter",
          "test_a (--freeze_constant_inputs): FAIL, expected PASS "
          "(regression): output 0 differs"));
}

TEST(ConformanceExpectationsTest, MissingAndExtraCasesDiffer) {
  std::vector<CaseRecord> expected = TwoCases();
  std::vector<CaseRecord> actual = {expected[1]};
  actual.push_back({"test_new", "Neg", Outcome::kPass, Outcome::kPass, ""});
  EXPECT_THAT(
      ExpectationDifferences(expected, actual),
      ElementsAre("test_new: PASS, but the expectations have no such case",
                  "test_b: expected UNSUPPORTED, but the run has no such "
                  "case"));
}

TEST(ConformanceExpectationsTest, MarkdownCountsBothModesAndListsLeftOut) {
  std::vector<CaseRecord> records = TwoCases();
  records.push_back({"test_d", "Dropout", Outcome::kUnsupported, Outcome::kPass,
                     "needs | a constant"});
  const std::string md = ExpectationsMarkdown(records);
  EXPECT_THAT(md, HasSubstr("| default (inputs fed as written) | 3 | 1 | 0 | "
                            "2 | 0 |\n"));
  EXPECT_THAT(md, HasSubstr("| `--freeze_constant_inputs` | 3 | 2 | 0 | 1 | "
                            "0 |\n"));
  EXPECT_THAT(md, HasSubstr("The 2 cases that do not pass as written"));
  EXPECT_THAT(md, HasSubstr("| Dropout | test_d | UNSUPPORTED (PASS frozen) | "
                            "needs \\| a constant |\n| Size | test_b | "
                            "UNSUPPORTED | Size node 0: no converter |\n"));
  EXPECT_THAT(md, Not(HasSubstr("test_a")));
}

}  // namespace
}  // namespace scopeflow
