#include "platform/logging.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// Collects what is logged while it lives, and restores stderr and the
// threshold after.
class CapturedLog {
 public:
  CapturedLog() : threshold_(LogLevelThreshold()) {
    SetLogSink([this](int level, const std::string& line) {
      lines_.emplace_back(level, line);
    });
  }
  ~CapturedLog() {
    SetLogSink(nullptr);
    SetLogLevel(threshold_);
  }
  const std::vector<std::pair<int, std::string>>& lines() const {
    return lines_;
  }

 private:
  const int threshold_;
  std::vector<std::pair<int, std::string>> lines_;
};

TEST(LoggingTest, DefaultThresholdShowsInformationButNotDetail) {
  // The test runs without SCOPEFLOW_LOG_LEVEL (the environment's value is
  // read once, at the first use).
  ASSERT_EQ(std::getenv("SCOPEFLOW_LOG_LEVEL"), nullptr);
  EXPECT_EQ(LogLevelThreshold(), kLogInfo);
  CapturedLog log;
  SF_LOG(kLogInfo, "loaded %d parameter(s)", 4);
  SF_LOG(kLogDebug, "not shown");
  ASSERT_EQ(log.lines().size(), 1u);
  EXPECT_EQ(log.lines()[0].first, kLogInfo);
  EXPECT_EQ(log.lines()[0].second, "loaded 4 parameter(s)\n");
}

TEST(LoggingTest, ThresholdFiltersByLevel) {
  CapturedLog log;
  SetLogLevel(kLogWarning);
  SF_LOG(kLogError, "bad %s", "thing");
  SF_LOG(kLogWarning, "odd");
  SF_LOG(kLogInfo, "hidden");
  SF_LOG(kLogDebug, "hidden too");
  SetLogLevel(0);
  SF_LOG(kLogWarning, "hidden at 0");
  SF_LOG(kLogError, "errors always");
  SetLogLevel(5);
  SF_LOG(kLogDebug, "detail");
  ASSERT_EQ(log.lines().size(), 4u);
  EXPECT_EQ(log.lines()[0].second, "scopeflow: error: bad thing\n");
  EXPECT_EQ(log.lines()[1].second, "scopeflow: warning: odd\n");
  EXPECT_EQ(log.lines()[2].second, "scopeflow: error: errors always\n");
  EXPECT_EQ(log.lines()[3].second, "detail\n");
}

TEST(LoggingTest, ArgumentsAreNotEvaluatedBelowThreshold) {
  CapturedLog log;
  SetLogLevel(kLogError);
  int evaluated = 0;
  SF_LOG(kLogInfo, "%d", ++evaluated);
  EXPECT_EQ(evaluated, 0);
  EXPECT_TRUE(log.lines().empty());
}

TEST(LoggingTest, ProgressLinesKeepTheirCarriageReturn) {
  CapturedLog log;
  SetLogLevel(kLogInfo);
  SF_LOG(kLogInfo, "step %d/%d\r", 3, 10);
  ASSERT_EQ(log.lines().size(), 1u);
  EXPECT_EQ(log.lines()[0].second, "step 3/10\r");
}

TEST(LoggingTest, ParsesNamesAndNumbers) {
  EXPECT_EQ(*ParseLogLevel("error"), kLogError);
  EXPECT_EQ(*ParseLogLevel("WARNING"), kLogWarning);
  EXPECT_EQ(*ParseLogLevel("info"), kLogInfo);
  EXPECT_EQ(*ParseLogLevel("debug"), kLogDebug);
  EXPECT_EQ(*ParseLogLevel("7"), 7);
  absl::StatusOr<int> bad = ParseLogLevel("loud");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"loud\" is none of error"),
            absl::string_view::npos)
      << bad.status();
  EXPECT_FALSE(ParseLogLevel("-1").ok());
}

}  // namespace
}  // namespace scopeflow
