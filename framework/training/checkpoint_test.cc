#include "framework/training/checkpoint.h"

#include <cstdlib>
#include <filesystem>

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

}  // namespace
}  // namespace scopeflow
