#include "framework/training/gradient_reducer.h"

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

Tensor Filled(const Dims& dims, const std::vector<float>& values) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), kFloat32, dims).ok());
  std::memcpy(tensor.data<float>(), values.data(),
              values.size() * sizeof(float));
  return tensor;
}

Tensor Random(const Dims& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> values(NumElements(dims));
  for (float& v : values) v = normal(rng);
  return Filled(dims, values);
}

std::vector<float> Values(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(),
                            tensor.data<float>() + tensor.numel());
}

TEST(GradientReducerTest, SumsInReplicaOrderAndScales) {
  GradientReducer reducer;
  const std::vector<std::vector<Tensor>> grads = {
      {Filled({2}, {1, 2}), Filled({1}, {10})},
      {Filled({2}, {3, 4}), Filled({1}, {20})},
      {Filled({2}, {5, 6}), Filled({1}, {30})}};
  ASSERT_TRUE(reducer.Start(grads, {"a@GRAD", "b@GRAD"}, 0.5f).ok());
  EXPECT_EQ(reducer.total_elements(), 3);
  reducer.ReducePart(0, 1);
  ASSERT_EQ(reducer.sums().size(), 2u);
  EXPECT_EQ(Values(reducer.sums()[0]), (std::vector<float>{4.5f, 6.0f}));
  EXPECT_EQ(Values(reducer.sums()[1]), (std::vector<float>{30.0f}));
  EXPECT_EQ(reducer.sums()[0].dims(), (Dims{2}));
  // The sums lie end to end in one buffer.
  EXPECT_EQ(Values(reducer.flat()), (std::vector<float>{4.5f, 6.0f, 30.0f}));
}

// Whatever the number of parts (threads), each element is summed in the
// same order: the results are the same bits.
TEST(GradientReducerTest, PartsDoNotChangeTheBits) {
  std::vector<std::vector<Tensor>> grads;
  for (uint32_t r = 0; r < 4; ++r) {
    grads.push_back(
        {Random({37, 5}, r), Random({3}, 10 + r), Random({64, 2}, 20 + r)});
  }
  const std::vector<std::string> names = {"w", "b", "v"};
  GradientReducer whole;
  ASSERT_TRUE(whole.Start(grads, names, 0.25f).ok());
  whole.ReducePart(0, 1);
  const std::vector<float> expected = Values(whole.flat());
  for (int parts : {2, 3, 7, 400}) {
    GradientReducer split;
    ASSERT_TRUE(split.Start(grads, names, 0.25f).ok());
    for (int part = parts - 1; part >= 0; --part) split.ReducePart(part, parts);
    const std::vector<float> got = Values(split.flat());
    ASSERT_EQ(got.size(), expected.size());
    EXPECT_EQ(
        std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)), 0)
        << parts << " parts";
  }
}

TEST(GradientReducerTest, MismatchesNameTheGradientAndReplica) {
  GradientReducer reducer;
  absl::Status shape = reducer.Start(
      {{Filled({2}, {1, 2})}, {Filled({3}, {1, 2, 3})}}, {"w@GRAD"}, 1);
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.message(),
              HasSubstr("gradient \"w@GRAD\" of replica 1 has shape [3], "
                        "replica 0's [2]"));
  Tensor ints;
  ASSERT_TRUE(ints.Allocate(CPUPlace(), kInt64, {2}).ok());
  absl::Status dtype =
      reducer.Start({{Filled({2}, {1, 2})}, {ints}}, {"w@GRAD"}, 1);
  ASSERT_FALSE(dtype.ok());
  EXPECT_THAT(dtype.message(),
              HasSubstr("gradient \"w@GRAD\" of replica 1 is"));
  EXPECT_THAT(dtype.message(), HasSubstr("expected a float32 tensor"));
  absl::Status count =
      reducer.Start({{Filled({2}, {1, 2})}, {}}, {"w@GRAD"}, 1);
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(count.message(),
              HasSubstr("replica 1 returned 0 gradients, expected 1"));
}

// Gradients in the order the backward pass finishes them, cut into buckets
// once each holds the cap (the first its own cap).
TEST(GradientReducerTest, PlansBucketsInProductionOrder) {
  GradientReducer reducer;
  // 4-byte floats: a 10, b 3, c 100, d 1 elements; produced d, c, b, a.
  ASSERT_TRUE(reducer
                  .Plan({"a", "b", "c", "d"}, {{10}, {3}, {100}, {1}},
                        {3, 2, 1, 0}, /*bucket_bytes=*/40,
                        /*first_bucket_bytes=*/4)
                  .ok());
  // [d] (4 bytes: the first cap), [c] (400 bytes), [b, a] (52 bytes).
  ASSERT_EQ(reducer.buckets(), 3);
  EXPECT_EQ(reducer.bucket_begin(0), 0);
  EXPECT_EQ(reducer.bucket_end(0), 1);
  EXPECT_EQ(reducer.bucket_end(1), 101);
  EXPECT_EQ(reducer.bucket_end(2), 114);
  EXPECT_EQ(reducer.total_elements(), 114);
  ASSERT_TRUE(reducer.BeginStep(2, 1.0f).ok());
  const std::vector<Tensor> grads = {Random({10}, 1), Random({3}, 2),
                                     Random({100}, 3), Random({1}, 4)};
  for (int r = 0; r < 2; ++r) {
    for (int g = 0; g < 4; ++g)
      ASSERT_TRUE(reducer.Provide(r, g, grads[g]).ok());
  }
  for (int b = 0; b < 3; ++b) {
    ASSERT_TRUE(reducer.WaitForBucket(b));
    reducer.ReduceBucket(b);
  }
  // The flat buffer holds d first; sums() stay in the names' order.
  EXPECT_EQ(reducer.flat().data<float>()[0], 2 * grads[3].data<float>()[0]);
  EXPECT_EQ(Values(reducer.sums()[0])[9], 2 * grads[0].data<float>()[9]);
  EXPECT_EQ(reducer.sums()[2].dims(), (Dims{100}));

  ASSERT_FALSE(reducer.Plan({"a", "b"}, {{1}, {1}}, {0, 0}, 4).ok());
  ASSERT_FALSE(reducer.Plan({"a"}, {{1}}, {0}, 0).ok());
}

// Replica threads provide their gradients in production order while this
// thread sums each bucket as it completes: the same bits as one sum of
// everything at the end.
TEST(GradientReducerTest, BucketsSummedAsTheyCompleteGiveTheSameBits) {
  constexpr int kReplicas = 3;
  const std::vector<std::string> names = {"w0", "b0", "w1", "b1", "w2"};
  const std::vector<Dims> dims = {{40, 8}, {8}, {8, 16}, {16}, {16, 3}};
  std::vector<std::vector<Tensor>> grads(kReplicas);
  for (int r = 0; r < kReplicas; ++r) {
    for (size_t g = 0; g < names.size(); ++g) {
      grads[r].push_back(Random(dims[g], 100 * r + g));
    }
  }
  GradientReducer whole;
  ASSERT_TRUE(whole.Start(grads, names, 1.0f / kReplicas).ok());
  whole.ReducePart(0, 1);
  const std::vector<int> order = {4, 3, 2, 1, 0};
  for (int64_t bucket_bytes : {int64_t{1}, int64_t{100}, int64_t{1} << 20}) {
    SCOPED_TRACE(bucket_bytes);
    GradientReducer buckets;
    ASSERT_TRUE(buckets.Plan(names, dims, order, bucket_bytes).ok());
    for (int step = 0; step < 2; ++step) {
      ASSERT_TRUE(buckets.BeginStep(kReplicas, 1.0f / kReplicas).ok());
      std::vector<std::thread> replicas;
      for (int r = 0; r < kReplicas; ++r) {
        replicas.emplace_back([&, r] {
          for (int g : order) {
            EXPECT_TRUE(buckets.Provide(r, g, grads[r][g]).ok());
          }
        });
      }
      for (int b = 0; b < buckets.buckets(); ++b) {
        ASSERT_TRUE(buckets.WaitForBucket(b));
        buckets.ReduceBucket(b);
      }
      for (std::thread& replica : replicas) replica.join();
      buckets.ReleaseInputs();
      for (size_t g = 0; g < names.size(); ++g) {
        const std::vector<float> want = Values(whole.sums()[g]);
        const std::vector<float> got = Values(buckets.sums()[g]);
        ASSERT_EQ(want.size(), got.size());
        EXPECT_EQ(
            std::memcmp(want.data(), got.data(), want.size() * sizeof(float)),
            0)
            << names[g];
      }
    }
  }
}

// A replica that stops early wakes the thread waiting for its buckets.
TEST(GradientReducerTest, AbortWakesTheWaitingThread) {
  GradientReducer reducer;
  ASSERT_TRUE(reducer.Plan({"a", "b"}, {{2}, {2}}, {1, 0}, 1).ok());
  ASSERT_TRUE(reducer.BeginStep(2, 1.0f).ok());
  ASSERT_TRUE(reducer.Provide(0, 1, Random({2}, 1)).ok());
  ASSERT_TRUE(reducer.Provide(1, 1, Random({2}, 2)).ok());
  EXPECT_TRUE(reducer.WaitForBucket(0));
  std::thread failing([&] {
    ASSERT_TRUE(reducer.Provide(0, 0, Random({2}, 3)).ok());
    reducer.Abort();
  });
  EXPECT_FALSE(reducer.WaitForBucket(1));
  failing.join();
  reducer.ReleaseInputs();
  // The next step starts afresh.
  ASSERT_TRUE(reducer.BeginStep(1, 1.0f).ok());
  ASSERT_TRUE(reducer.Provide(0, 1, Random({2}, 1)).ok());
  ASSERT_TRUE(reducer.Provide(0, 0, Random({2}, 1)).ok());
  EXPECT_TRUE(reducer.WaitForBucket(1));
}

TEST(GradientReducerTest, ProvideNamesTheGradientAndReplica) {
  GradientReducer reducer;
  ASSERT_TRUE(reducer.Plan({"w@GRAD"}, {{2}}, {0}, 4).ok());
  ASSERT_TRUE(reducer.BeginStep(2, 1.0f).ok());
  absl::Status shape = reducer.Provide(1, 0, Filled({3}, {1, 2, 3}));
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.message(),
              HasSubstr("gradient \"w@GRAD\" of replica 1 has shape [3], "
                        "its parameter [2]"));
  ASSERT_TRUE(reducer.Provide(1, 0, Filled({2}, {1, 2})).ok());
  absl::Status twice = reducer.Provide(1, 0, Filled({2}, {1, 2}));
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.message(),
              HasSubstr("gradient \"w@GRAD\" of replica 1 was provided "
                        "twice"));
  absl::Status index = reducer.Provide(2, 0, Filled({2}, {1, 2}));
  ASSERT_FALSE(index.ok());
  EXPECT_THAT(index.message(), HasSubstr("there are 1 gradients and 2"));
}

// Replicas on CUDA devices: the reducer checks where each replica's
// gradients are and tells when buckets complete; the devices hold the sums
// (DeviceReplicas), so sums() stays empty. Runs without a device.
TEST(GradientReducerTest, ReplicaPlacesAreChecked) {
  GradientReducer reducer;
  ASSERT_TRUE(reducer.Plan({"a", "b"}, {{2}, {1}}, {1, 0}, 4).ok());
  ASSERT_TRUE(reducer.SetReplicaPlaces({CUDAPlace(0), CUDAPlace(0)}).ok());
  absl::Status count = reducer.BeginStep(3, 1.0f);
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(count.message(), HasSubstr("3 replicas, and places for 2"));
  ASSERT_TRUE(reducer.BeginStep(2, 1.0f).ok());
  EXPECT_TRUE(reducer.sums().empty());
  absl::Status host = reducer.Provide(1, 0, Filled({2}, {1, 2}));
  ASSERT_FALSE(host.ok());
  EXPECT_THAT(host.message(),
              HasSubstr("gradient \"a\" of replica 1 is Tensor<float32, [2], "
                        "cpu>: expected a float32 tensor on cuda:0"));
  // The layout the devices' buffers follow: b first.
  EXPECT_EQ(reducer.order(), (std::vector<int>{1, 0}));
  EXPECT_EQ(reducer.gradient_offset(1), 0);
  EXPECT_EQ(reducer.gradient_offset(0), 1);
  EXPECT_EQ(reducer.gradient_elements(0), 2);
  EXPECT_EQ(reducer.gradient_dims(0), (Dims{2}));
  EXPECT_EQ(reducer.bucket_of(1), 0);
  EXPECT_EQ(reducer.bucket_of(0), 1);

  // Back on the CPU: the sums are the reducer's again.
  ASSERT_TRUE(reducer.SetReplicaPlaces({CPUPlace(), CPUPlace()}).ok());
  ASSERT_TRUE(reducer.BeginStep(2, 0.5f).ok());
  ASSERT_EQ(reducer.sums().size(), 2u);
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(reducer.Provide(r, 0, Filled({2}, {1, 2})).ok());
    ASSERT_TRUE(reducer.Provide(r, 1, Filled({1}, {4})).ok());
  }
  EXPECT_EQ(reducer.input(1, 1).data<float>()[0], 4.0f);
  for (int b = 0; b < reducer.buckets(); ++b) {
    ASSERT_TRUE(reducer.WaitForBucket(b));
    reducer.ReduceBucket(b);
  }
  EXPECT_EQ(Values(reducer.sums()[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values(reducer.sums()[1]), (std::vector<float>{4}));
}

}  // namespace
}  // namespace scopeflow
