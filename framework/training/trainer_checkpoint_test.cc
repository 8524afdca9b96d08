// Resuming refuses checkpoints that do not fit the run: another optimizer's
// state, another net's variables, a folder another trainer is writing.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "framework/param_io.h"
#include "framework/training/checkpoint.h"
#include "framework/training/toy_problem.h"
#include "framework/training/trainer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::filesystem::remove_all(path);
  return path;
}

TrainerOptions Options(const std::string& optimizer, const std::string& dir) {
  TrainerOptions options;
  options.batch_size = 16;
  options.epochs = 1;
  options.optimizer.type = optimizer;
  options.checkpoint_dir = dir;
  return options;
}

std::unique_ptr<Trainer> NewTrainer(const TrainerOptions& options) {
  absl::StatusOr<std::unique_ptr<Trainer>> trainer =
      Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_TRUE((*trainer)->Initialize().ok());
  return std::move(*trainer);
}

// Trains 3 steps with `optimizer` and saves a checkpoint in `dir`.
void SaveAfterThreeSteps(const std::string& optimizer, const std::string& dir) {
  std::unique_ptr<Trainer> trainer = NewTrainer(Options(optimizer, dir));
  ASSERT_TRUE(trainer->TrainUntil(Clusters(64), 3, nullptr).ok());
  ASSERT_TRUE(trainer->SaveCheckpoint().ok());
}

TEST(TrainerCheckpointTest, TheLayoutOfTheOptimizerIsItsStateVariables) {
  std::unique_ptr<Trainer> adam = NewTrainer(Options("adam", ""));
  EXPECT_EQ(adam->optimizer_layout().type, "adam");
  EXPECT_FALSE(adam->optimizer_layout().state.empty());
  for (const std::string& name : adam->optimizer_layout().state) {
    EXPECT_THAT(adam->state_names(), Contains(name));
    EXPECT_NE(name, kStepVar);
  }
  EXPECT_TRUE(NewTrainer(Options("sgd", ""))->optimizer_layout().state.empty());
}

TEST(TrainerCheckpointTest, ResumingWithAnotherOptimizerIsRefused) {
  const std::string dir = TempDir("adam_then_sgd");
  SaveAfterThreeSteps("adam", dir);
  for (const char* other : {"sgd", "momentum"}) {
    std::unique_ptr<Trainer> trainer = NewTrainer(Options(other, dir));
    const absl::Status status = trainer->Resume().status();
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(),
                HasSubstr("holds the state of optimizer \"adam\""));
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("uses \"", other)));
    EXPECT_THAT(status.message(), HasSubstr("--reset_optimizer_state"));
    EXPECT_EQ(*trainer->step(), 0);  // Nothing was loaded.
  }
  const std::string back = TempDir("sgd_then_adam");
  SaveAfterThreeSteps("sgd", back);
  std::unique_ptr<Trainer> adam = NewTrainer(Options("adam", back));
  EXPECT_THAT(adam->Resume().status().message(),
              HasSubstr("optimizer \"sgd\" (0 variable(s)); this run uses "
                        "\"adam\""));
}

TEST(TrainerCheckpointTest, AResetKeepsParametersAndStepNotTheOldState) {
  const std::string dir = TempDir("reset");
  SaveAfterThreeSteps("adam", dir);
  TrainerOptions options = Options("momentum", dir);
  options.reset_optimizer_state = true;
  std::unique_ptr<Trainer> trainer = NewTrainer(options);
  absl::StatusOr<bool> resumed = trainer->Resume();
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_TRUE(*resumed);
  EXPECT_EQ(*trainer->step(), 3);
  const CheckpointFile& from = *trainer->resumed_from();
  ASSERT_TRUE(from.optimizer.has_value());
  EXPECT_EQ(from.optimizer->type, "adam");
  EXPECT_THAT(from.skipped,
              testing::UnorderedElementsAreArray(from.optimizer->state));
  // The momentum state is fresh (zeros), the parameters the checkpoint's.
  Scope saved;
  ASSERT_TRUE(LoadParams(from.path, saved, CPUPlace()).ok());
  for (const std::string& name : trainer->state_names()) {
    const Tensor* now = *trainer->scope().FindVar(name)->Get<Tensor>();
    const bool fresh =
        absl::c_linear_search(trainer->optimizer_layout().state, name);
    if (fresh) {
      for (int64_t i = 0; i < now->numel(); ++i) {
        EXPECT_EQ(now->data<float>()[i], 0.0f) << name;
      }
    } else if (name != kLearningRateVar) {
      const Tensor* then = *saved.FindVar(name)->Get<Tensor>();
      ASSERT_EQ(now->nbytes(), then->nbytes()) << name;
      EXPECT_EQ(std::memcmp(now->raw_data(), then->raw_data(), now->nbytes()),
                0)
          << name;
    }
  }
  EXPECT_TRUE(trainer->TrainUntil(Clusters(64), 5, nullptr).ok());
}

TEST(TrainerCheckpointTest, ACheckpointWithoutARecordIsCheckedByItsNames) {
  // As written before checkpoints recorded their optimizer: the tensors
  // only.
  const std::string dir = TempDir("unrecorded");
  {
    std::unique_ptr<Trainer> adam = NewTrainer(Options("adam", ""));
    ASSERT_TRUE(adam->TrainUntil(Clusters(64), 1, nullptr).ok());
    ASSERT_TRUE(
        SaveCheckpoint(adam->scope(), adam->state_names(), dir, 1, 3).ok());
  }
  std::unique_ptr<Trainer> sgd = NewTrainer(Options("sgd", dir));
  const absl::Status status = sgd->Resume().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("which this run's training net does not have"));
  EXPECT_THAT(status.message(), HasSubstr("@MOMENT"));
  // Resuming the same optimizer from it works.
  sgd.reset();  // Releases the folder.
  std::unique_ptr<Trainer> adam = NewTrainer(Options("adam", dir));
  const absl::StatusOr<bool> resumed = adam->Resume();
  EXPECT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_FALSE(adam->resumed_from()->optimizer.has_value());
}

TEST(TrainerCheckpointTest, ASecondTrainerOnOneFolderIsRefused) {
  const std::string dir = TempDir("shared");
  std::unique_ptr<Trainer> first = NewTrainer(Options("sgd", dir));
  ASSERT_TRUE(first->TrainUntil(Clusters(64), 1, nullptr).ok());
  ASSERT_TRUE(first->SaveCheckpoint().ok());
  std::unique_ptr<Trainer> second = NewTrainer(Options("sgd", dir));
  const absl::Status resumed = second->Resume().status();
  EXPECT_EQ(resumed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(resumed.message(),
              HasSubstr(absl::StrCat("checkpoint folder ", dir,
                                     " is in use by another trainer (process ",
                                     getpid())));
  ASSERT_TRUE(second->TrainUntil(Clusters(64), 2, nullptr).ok());
  EXPECT_THAT(second->SaveCheckpoint().message(), HasSubstr("in use"));
  first.reset();
  const absl::StatusOr<bool> resumed_now = second->Resume();
  ASSERT_TRUE(resumed_now.ok()) << resumed_now.status();
  EXPECT_EQ(*second->step(), 1);
  EXPECT_TRUE(second->SaveCheckpoint().ok());
  EXPECT_THAT(CheckpointDirLock::Acquire(dir).status().message(),
              HasSubstr("in use by another trainer"));
}

}  // namespace
}  // namespace scopeflow
