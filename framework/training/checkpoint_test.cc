#include "framework/training/checkpoint.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::filesystem::remove_all(path);
  return path;
}

void SetWeights(Scope& scope, float value) {
  *scope.Var("w")->GetMutable<Tensor>().value() =
      MakeTensor<float>({2}, {value, value + 1});
}

TEST(CheckpointTest, SavesKeepsTheNewestAndRestoresTheLatest) {
  const std::string dir = TempDir("ckpt");
  Scope scope;
  for (int64_t step : {10, 20, 30, 40}) {
    SetWeights(scope, static_cast<float>(step));
    ASSERT_TRUE(SaveCheckpoint(scope, {"w"}, dir, step, /*keep=*/2).ok());
  }
  auto files = ListCheckpoints(dir);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].step, 30);
  EXPECT_EQ((*files)[1].step, 40);

  Scope restored;
  auto latest = RestoreLatestCheckpoint(dir, restored, CPUPlace());
  ASSERT_TRUE(latest.ok()) << latest.status();
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->step, 40);
  EXPECT_THAT(Values<float>(*restored.FindVar("w")->Get<Tensor>().value()),
              ElementsAre(40, 41));
}

TEST(CheckpointTest, NoDirectoryMeansNoCheckpoint) {
  Scope scope;
  auto latest = RestoreLatestCheckpoint(TempDir("nothing"), scope, CPUPlace());
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_FALSE(latest->has_value());
}

TEST(CheckpointTest, ADamagedNewestIsRefusedAndTheOlderOneIsIntact) {
  const std::string dir = TempDir("damaged");
  Scope scope;
  SetWeights(scope, 1);
  ASSERT_TRUE(SaveCheckpoint(scope, {"w"}, dir, 1, 3).ok());
  SetWeights(scope, 2);
  ASSERT_TRUE(SaveCheckpoint(scope, {"w"}, dir, 2, 3).ok());
  const std::string newest = CheckpointPath(dir, 2);
  auto bytes = ReadFile(newest);
  ASSERT_TRUE(bytes.ok());
  std::string altered = *bytes;
  altered[altered.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteFileAtomically(newest, altered).ok());

  Scope restored;
  SetWeights(restored, 7);
  auto latest = RestoreLatestCheckpoint(dir, restored, CPUPlace());
  ASSERT_FALSE(latest.ok());
  EXPECT_THAT(latest.status().message(), HasSubstr(newest));
  EXPECT_THAT(latest.status().message(),
              HasSubstr(CheckpointPath(dir, 1) + " was not touched"));
  // Nothing was loaded.
  EXPECT_THAT(Values<float>(*restored.FindVar("w")->Get<Tensor>().value()),
              ElementsAre(7, 8));

  // Truncated: refused as well.
  ASSERT_TRUE(WriteFileAtomically(newest, bytes->substr(0, 20)).ok());
  EXPECT_FALSE(RestoreLatestCheckpoint(dir, restored, CPUPlace()).ok());

  // With the damaged file moved away, the older one restores.
  std::filesystem::remove(newest);
  latest = RestoreLatestCheckpoint(dir, restored, CPUPlace());
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_THAT(Values<float>(*restored.FindVar("w")->Get<Tensor>().value()),
              ElementsAre(1, 2));
}

TEST(CheckpointTest, AMissingVariableFailsTheSaveAndKeepsTheOldFiles) {
  const std::string dir = TempDir("missing_var");
  Scope scope;
  SetWeights(scope, 3);
  ASSERT_TRUE(SaveCheckpoint(scope, {"w"}, dir, 5, 3).ok());
  EXPECT_FALSE(SaveCheckpoint(scope, {"w", "nope"}, dir, 6, 3).ok());
  auto files = ListCheckpoints(dir);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].step, 5);
}

int writes_before_kill = 0;

// Kills the process in the middle of writing a file, as SIGKILL from
// outside would: no destructor, no cleanup.
int KillOnWrite(FileStep step) {
  if (step == FileStep::kWrite && --writes_before_kill < 0) raise(SIGKILL);
  return 0;
}

TEST(CheckpointTest, AKilledSaveKeepsTheLastCheckpointAndIsCleanedUpLater) {
  const std::string dir = TempDir("killed");
  Scope scope;
  SetWeights(scope, 1);
  ASSERT_TRUE(SaveCheckpoint(scope, {"w"}, dir, 1, 3).ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SetWeights(scope, 2);
    writes_before_kill = 3;
    SetFileFaultForTesting(&KillOnWrite);
    (void)SaveCheckpoint(scope, {"w"}, dir, 2, 3);
    _exit(0);  // Not reached: the save is killed.
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  int leftovers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (TemporaryWriterPid(entry.path().filename().string()) == child) {
      ++leftovers;
    }
  }
  EXPECT_EQ(leftovers, 1);
  // The killed save is no checkpoint; the previous one restores.
  Scope restored;
  auto latest = RestoreLatestCheckpoint(dir, restored, CPUPlace());
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ((*latest)->step, 1);
  EXPECT_THAT(Values<float>(*restored.FindVar("w")->Get<Tensor>().value()),
              ElementsAre(1, 2));
  // The next save removes the leftover.
  SetWeights(scope, 3);
  ASSERT_TRUE(SaveCheckpoint(scope, {"w"}, dir, 3, 3).ok());
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ElementsAre("ckpt-000000000001.sfparams",
                                 "ckpt-000000000003.sfparams"));
}

TEST(CheckpointTest, TheOptimizerRecordRoundTripsAndIsNotAVariable) {
  const std::string dir = TempDir("recorded");
  Scope scope;
  SetWeights(scope, 1);
  OptimizerLayout adam{"adam", {"w@MOMENT1", "w@MOMENT2"}};
  for (const std::string& name : adam.state) {
    *scope.Var(name)->GetMutable<Tensor>().value() =
        MakeTensor<float>({2}, {0, 0});
  }
  ASSERT_TRUE(
      SaveCheckpoint(scope, {"w", "w@MOMENT1", "w@MOMENT2"}, dir, 1, 3, &adam)
          .ok());
  Scope restored;
  auto latest = RestoreLatestCheckpoint(dir, restored, CPUPlace());
  ASSERT_TRUE(latest.ok()) << latest.status();
  ASSERT_TRUE((*latest)->optimizer.has_value());
  EXPECT_EQ((*latest)->optimizer->type, "adam");
  EXPECT_EQ((*latest)->optimizer->state, adam.state);
  EXPECT_EQ(restored.FindVar(kCheckpointInfoVar), nullptr);

  // Checked against a run of another optimizer.
  RestoreOptions sgd;
  sgd.expected_names = std::vector<std::string>{"w"};
  sgd.optimizer = OptimizerLayout{"sgd", {}};
  Scope other;
  const absl::Status refused =
      RestoreLatestCheckpoint(dir, other, CPUPlace(), sgd).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("optimizer \"adam\" (2 variable"));
  EXPECT_EQ(other.FindVar("w"), nullptr);
  sgd.reset_optimizer_state = true;
  latest = RestoreLatestCheckpoint(dir, other, CPUPlace(), sgd);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_THAT((*latest)->skipped, ElementsAre("w@MOMENT1", "w@MOMENT2"));
  EXPECT_THAT(other.LocalVarNames(), ElementsAre("w"));
}

}  // namespace
}  // namespace scopeflow
