#include "platform/status_macros.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

absl::Status CheckPositive(int value) {
  SF_CHECK(value > 0, "value must be positive, got %d", value);
  return absl::OkStatus();
}

absl::Status CheckFound(bool found) {
  SF_CHECK_CODE(found, absl::StatusCode::kNotFound, "variable %s not found",
                "w");
  return absl::OkStatus();
}

absl::StatusOr<int> Twice(int value) {
  SF_RETURN_IF_ERROR(CheckPositive(value));
  return 2 * value;
}

absl::StatusOr<std::string> Describe(int value) {
  SF_ASSIGN_OR_RETURN(int twice, Twice(value));
  return std::to_string(twice);
}

TEST(StatusMacrosTest, CheckFormatsTheMessageWithInvalidArgument) {
  EXPECT_TRUE(CheckPositive(3).ok());
  absl::Status status = CheckPositive(-2);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "value must be positive, got -2");
}

TEST(StatusMacrosTest, CheckCodeUsesTheGivenCode) {
  EXPECT_TRUE(CheckFound(true).ok());
  absl::Status status = CheckFound(false);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("variable w not found"));
}

TEST(StatusMacrosTest, ReturnIfErrorAndAssignOrReturnPropagate) {
  EXPECT_EQ(*Describe(21), "42");
  absl::StatusOr<std::string> failed = Describe(0);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.status().message(), HasSubstr("got 0"));
}

}  // namespace
}  // namespace scopeflow
