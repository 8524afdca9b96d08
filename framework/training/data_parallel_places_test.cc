// DataParallelTrainer over places: the list parsed, bad places refused by
// name on any machine, and replicas on CUDA devices (two on cuda:0 with one
// GPU, as the issue asks; one per device with two), which skip without a
// device.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/training/data_parallel_trainer.h"
#include "framework/training/toy_problem.h"
#include "framework/training/trainer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

TrainerOptions Options(int64_t batch) {
  TrainerOptions options;
  options.batch_size = batch;
  options.epochs = 3;
  options.optimizer.type = "momentum";
  options.optimizer.learning_rate = 0.1f;
  return options;
}

// A float32 variable of `scope`, wherever it lives, on the host.
std::vector<float> HostValues(Scope& scope, const std::string& name) {
  const Variable* var = scope.FindLocalVar(name);
  EXPECT_NE(var, nullptr) << name;
  if (var == nullptr) return {};
  absl::StatusOr<Tensor> host = (*var->Get<Tensor>())->CopyTo(CPUPlace());
  EXPECT_TRUE(host.ok()) << host.status();
  if (!host.ok()) return {};
  return std::vector<float>(host->data<float>(),
                            host->data<float>() + host->numel());
}

void ExpectNear(Scope& expected, Scope& actual,
                const std::vector<std::string>& names, double tolerance) {
  for (const std::string& name : names) {
    const Tensor* tensor = *expected.FindLocalVar(name)->Get<Tensor>();
    if (tensor->dtype() != kFloat32) continue;
    const std::vector<float> want = HostValues(expected, name);
    const std::vector<float> got = HostValues(actual, name);
    ASSERT_EQ(want.size(), got.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      const double scale = std::max(
          1.0, std::max(std::abs(double{want[i]}), std::abs(double{got[i]})));
      ASSERT_NEAR(want[i], got[i], tolerance * scale)
          << name << "[" << i << "]";
    }
  }
}

TEST(DataParallelPlacesTest, ParsesAListAndNamesAnUnknownPlace) {
  absl::StatusOr<std::vector<Place>> places = ParsePlaces("cuda:0,cuda:1");
  ASSERT_TRUE(places.ok()) << places.status();
  EXPECT_EQ(*places, (std::vector<Place>{CUDAPlace(0), CUDAPlace(1)}));
  places = ParsePlaces("cpu,cpu");
  ASSERT_TRUE(places.ok()) << places.status();
  EXPECT_EQ(*places, (std::vector<Place>{CPUPlace(), CPUPlace()}));

  absl::StatusOr<std::vector<Place>> bad = ParsePlaces("cuda:0,tpu:1");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("places \"cuda:0,tpu:1\": unknown place \"tpu:1\""));
  bad = ParsePlaces("cuda:0,");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown place \"\""));
  bad = ParsePlaces("cuda:-1");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown place \"cuda:-1\""));
}

TEST(DataParallelPlacesTest, RefusesPlacesItCannotRunOn) {
  const TrainerOptions options = Options(16);
  auto mixed = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                           options, {CPUPlace(), CUDAPlace(0)});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(),
              HasSubstr("replica places begin with the CPU, then cuda:0"));
  mixed = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(), options,
                                      {CUDAPlace(0), CPUPlace()});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(),
              HasSubstr("places cuda:0,cpu: cpu among CUDA devices"));
  auto none = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                          options, std::vector<Place>{});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("on no place"));

  // One place more than the devices this process sees (all of them where
  // there is none, or no GPU code).
  const int devices = CudaDeviceCount();
  std::vector<Place> places;
  for (int d = 0; d <= devices; ++d) places.push_back(CUDAPlace(d));
  auto too_many = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                              options, places);
  ASSERT_FALSE(too_many.ok());
  if (!BuiltWithCuda()) {
    EXPECT_THAT(too_many.status().message(),
                HasSubstr("this build has no GPU code"));
  } else {
    EXPECT_THAT(too_many.status().message(),
                HasSubstr(absl::StrCat(
                    "replica ", devices, " is on cuda:", devices,
                    ", and this process sees ", devices, " CUDA device")));
  }
}

// CPU places are replica threads: the same bits as a replica count.
TEST(DataParallelPlacesTest, CpuPlacesAreReplicaThreads) {
  const Dataset data = Clusters(96);
  auto by_count = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                              Options(24), 2);
  auto by_places = DataParallelTrainer::Create(
      ToyStartupNet(), ToyMainNet(), Options(24), {CPUPlace(), CPUPlace()});
  ASSERT_TRUE(by_count.ok()) << by_count.status();
  ASSERT_TRUE(by_places.ok()) << by_places.status();
  EXPECT_EQ((*by_places)->replicas(), 2);
  EXPECT_EQ((*by_places)->devices(), 1);
  for (auto* trainer : {&*by_count, &*by_places}) {
    ASSERT_TRUE((*trainer)->Initialize().ok());
    ASSERT_TRUE((*trainer)->TrainUntil(data, 6, nullptr).ok());
  }
  ExpectNear((*by_count)->scope(), (*by_places)->scope(),
             (*by_count)->state_names(), 0);
}

// Replicas on CUDA devices follow one trainer of the whole batch on the
// first device: small buckets summed on the device(s) and all-reduced by
// NCCL as the backward pass produces them; every device ends with the
// same state, and the checkpoint (from the first device) resumes on the
// CPU.
void TrainOnDevicesAndCompare(const std::vector<Place>& places,
                              const std::string& checkpoints) {
  const Dataset data = Clusters(96);
  TrainerOptions options = Options(24);
  options.place = places[0];
  auto one = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE((*one)->Initialize().ok());
  ASSERT_TRUE((*one)->TrainUntil(data, 10, nullptr).ok());

  options.checkpoint_dir = checkpoints;
  std::filesystem::remove_all(checkpoints);
  auto parallel = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                              options, places, nullptr,
                                              /*bucket_bytes=*/1);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  DataParallelTrainer& trainer = **parallel;
  ASSERT_TRUE(trainer.Initialize().ok());
  absl::Status trained = trainer.TrainUntil(data, 10, nullptr);
  ASSERT_TRUE(trained.ok()) << trained;
  EXPECT_EQ(*trainer.step(), 10);
  EXPECT_EQ(trainer.reducer().buckets(),
            static_cast<int>(trainer.parameters().size()));
  EXPECT_EQ(trainer.times().steps, 10);
  ExpectNear((*one)->scope(), trainer.scope(), (*one)->state_names(), 1e-4);
  for (int k = 1; k < trainer.devices(); ++k) {
    ExpectNear(trainer.scope(), trainer.device_scope(k), trainer.state_names(),
               0);
  }
  absl::StatusOr<EvalReport> eval = trainer.Evaluate(data);
  ASSERT_TRUE(eval.ok()) << eval.status();

  ASSERT_TRUE(trainer.SaveCheckpoint().ok());
  TrainerOptions on_cpu = Options(24);
  on_cpu.checkpoint_dir = checkpoints;
  parallel->reset();
  auto resumed = Trainer::Create(ToyStartupNet(), ToyMainNet(), on_cpu);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE((*resumed)->Initialize().ok());
  absl::StatusOr<bool> found = (*resumed)->Resume();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(*found);
  EXPECT_EQ(*(*resumed)->step(), 10);
  ExpectNear((*one)->scope(), (*resumed)->scope(), (*one)->state_names(), 1e-4);
}

std::string TempDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(DataParallelPlacesTest, TwoReplicasOnOneDevice) {
  if (CudaDeviceCount() == 0) {
    GTEST_SKIP() << "no CUDA device (or a build without GPU code): two "
                    "replicas on cuda:0 need one";
  }
  TrainOnDevicesAndCompare({CUDAPlace(0), CUDAPlace(0)},
                           TempDir("dp_one_device"));
}

TEST(DataParallelPlacesTest, OneReplicaPerDevice) {
  if (CudaDeviceCount() < 2) {
    GTEST_SKIP() << "fewer than two CUDA devices (" << CudaDeviceCount()
                 << "): one replica on each of cuda:0 and cuda:1 needs two";
  }
  TrainOnDevicesAndCompare({CUDAPlace(0), CUDAPlace(1)},
                           TempDir("dp_two_devices"));
}

}  // namespace
}  // namespace scopeflow
