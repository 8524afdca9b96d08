#include "platform/place.h"

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/default_place.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

TEST(PlaceTest, ComparesHashesAndPrints) {
  EXPECT_EQ(CPUPlace(), Place());
  EXPECT_EQ(CUDAPlace(1), CUDAPlace(1));
  EXPECT_NE(CUDAPlace(0), CUDAPlace(1));
  EXPECT_NE(CPUPlace(), CUDAPlace(0));
  EXPECT_LT(CPUPlace(), CUDAPlace(0));
  EXPECT_LT(CUDAPlace(0), CUDAPlace(1));

  absl::flat_hash_set<Place> places = {CPUPlace(), CUDAPlace(0), CUDAPlace(1),
                                       CUDAPlace(0)};
  EXPECT_EQ(places.size(), 3);
  std::unordered_set<Place> std_places = {CPUPlace(), CUDAPlace(2), CPUPlace()};
  EXPECT_EQ(std_places.size(), 2);

  std::ostringstream out;
  out << CPUPlace() << " " << CUDAPlace(3);
  EXPECT_EQ(out.str(), "cpu cuda:3");
  EXPECT_TRUE(CUDAPlace(3).is_cuda());
  EXPECT_EQ(CUDAPlace(3).device(), 3);
  EXPECT_TRUE(CPUPlace().is_cpu());
}

TEST(PlaceTest, ParsesWhatItPrints) {
  EXPECT_EQ(*ParsePlace("cpu"), CPUPlace());
  EXPECT_EQ(*ParsePlace("cuda"), CUDAPlace(0));
  EXPECT_EQ(*ParsePlace("cuda:7"), CUDAPlace(7));
  EXPECT_EQ(*ParsePlace(CUDAPlace(12).ToString()), CUDAPlace(12));
}

TEST(PlaceTest, UnknownPlaceIsAnError) {
  for (const char* text : {"tpu:0", "", "cuda:", "cuda:-1", "cuda:x", "CPU"}) {
    absl::StatusOr<Place> place = ParsePlace(text);
    ASSERT_FALSE(place.ok()) << text;
    EXPECT_EQ(place.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(place.status().message(), HasSubstr("unknown place"));
    EXPECT_THAT(place.status().message(), HasSubstr("cuda:N"));
  }
}

TEST(DefaultPlaceTest, GuardsNestAndRestore) {
  EXPECT_EQ(DefaultPlace(), CPUPlace());
  {
    PlaceGuard outer(CUDAPlace(1));
    EXPECT_EQ(DefaultPlace(), CUDAPlace(1));
    {
      PlaceGuard inner(CUDAPlace(2));
      EXPECT_EQ(DefaultPlace(), CUDAPlace(2));
    }
    EXPECT_EQ(DefaultPlace(), CUDAPlace(1));
  }
  EXPECT_EQ(DefaultPlace(), CPUPlace());
}

TEST(DefaultPlaceTest, GuardRestoresWhenAnExceptionUnwinds) {
  try {
    PlaceGuard guard(CUDAPlace(4));
    throw std::runtime_error("step failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(DefaultPlace(), CPUPlace());
}

absl::Status RunOnPlaceThenFail() {
  PlaceGuard guard(CUDAPlace(5));
  return absl::InternalError("kernel failed");
}

TEST(DefaultPlaceTest, GuardRestoresOnAnEarlyErrorReturn) {
  EXPECT_FALSE(RunOnPlaceThenFail().ok());
  EXPECT_EQ(DefaultPlace(), CPUPlace());
}

TEST(DefaultPlaceTest, ThreadsNeverSeeEachOthersDefault) {
  constexpr int kThreads = 4;
  constexpr int kIterations = 20000;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &mismatches] {
      const Place mine = t == 0 ? CPUPlace() : CUDAPlace(t);
      for (int i = 0; i < kIterations; ++i) {
        PlaceGuard guard(mine);
        if (DefaultPlace() != mine) mismatches.fetch_add(1);
        {
          PlaceGuard nested(CUDAPlace(100 + t));
          if (DefaultPlace() != CUDAPlace(100 + t)) mismatches.fetch_add(1);
        }
        if (DefaultPlace() != mine) mismatches.fetch_add(1);
      }
      if (DefaultPlace() != CPUPlace()) mismatches.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(DefaultPlace(), CPUPlace());
}

}  // namespace
}  // namespace scopeflow
