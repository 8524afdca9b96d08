// RequestAdmission: each model's queue bound, places given back when a
// request is answered, and the deadline each request runs under.
#include "tools/serve_admission.h"

#include <chrono>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;
using Clock = RequestAdmission::Clock;

TEST(RequestAdmissionTest, EachModelsQueueIsBoundedAndPlacesComeBack) {
  AdmissionOptions options;
  options.max_queued_requests = 2;
  RequestAdmission admission(options);
  const Clock::time_point now = Clock::now();
  std::vector<std::unique_ptr<RequestAdmission::Admitted>> held;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> admitted =
        admission.Admit("mlp", now, 0);
    ASSERT_TRUE(admitted.ok()) << admitted.status();
    held.push_back(*std::move(admitted));
  }
  EXPECT_EQ(admission.queued("mlp"), 2);
  const absl::Status full = admission.Admit("mlp", now, 0).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(full.message(),
              HasSubstr("2 requests for model \"mlp\" are queued already, the "
                        "limit (--max_queued_requests); try again later"));
  // Another model's queue is its own.
  EXPECT_TRUE(admission.Admit("other", now, 0).ok());
  EXPECT_EQ(admission.queued("other"), 0);
  // An answered request gives its place back.
  held.pop_back();
  EXPECT_EQ(admission.queued("mlp"), 1);
  EXPECT_TRUE(admission.Admit("mlp", now, 0).ok());
  held.clear();
  EXPECT_EQ(admission.queued("mlp"), 0);
}

TEST(RequestAdmissionTest, TheClientsDeadlineElseTheServersDefault) {
  const Clock::time_point arrived = Clock::now();
  RequestAdmission none(AdmissionOptions{});
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> unbounded =
      none.Admit("mlp", arrived, 0);
  ASSERT_TRUE(unbounded.ok());
  EXPECT_FALSE((*unbounded)->cancellation().has_deadline());
  EXPECT_EQ((*unbounded)->timeout_ms(), 0);

  AdmissionOptions options;
  options.request_timeout_ms = 300;
  RequestAdmission server_default(options);
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> defaulted =
      server_default.Admit("mlp", arrived, 0);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ((*defaulted)->cancellation().deadline(),
            arrived + std::chrono::milliseconds(300));
  // A client's own deadline wins, longer or shorter.
  for (const int64_t asked : {50, 5000}) {
    absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> own =
        server_default.Admit("mlp", arrived, asked);
    ASSERT_TRUE(own.ok());
    EXPECT_EQ((*own)->timeout_ms(), asked);
    EXPECT_EQ((*own)->cancellation().deadline(),
              arrived + std::chrono::milliseconds(asked));
  }
  // Past its deadline, the run's check says so.
  absl::StatusOr<std::unique_ptr<RequestAdmission::Admitted>> late =
      server_default.Admit("mlp", arrived - std::chrono::seconds(1), 0);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ((*late)->cancellation().Check().code(),
            absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace scopeflow
