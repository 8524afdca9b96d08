#include "tools/serve_models.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "tools/serve_testing.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::HasSubstr;

// A fresh folder under the test's temporary folder.
std::string Folder(const std::string& name) {
  const fs::path path = fs::path(std::getenv("TEST_TMPDIR")) / name;
  fs::remove_all(path);
  fs::create_directories(path);
  return path.string();
}

float FirstOutput(const ServedModel& model) {
  absl::StatusOr<std::vector<Tensor>> out =
      model.predictor.Run({Feed{"image", MlpInput(1, 0)}});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].data<float>()[9] : -1;
}

TEST(ListModelVersionsTest, ListsNumberedFoldersOnly) {
  const std::string dir = Folder("listing");
  for (const char* name : {"1", "10", "2", "tmp", "3a", "0", "-4"}) {
    fs::create_directories(fs::path(dir) / name);
  }
  ASSERT_TRUE(WriteFileAtomically(dir + "/7", "a file, not a version").ok());
  absl::StatusOr<std::vector<int64_t>> versions = ListModelVersions(dir);
  ASSERT_TRUE(versions.ok()) << versions.status();
  EXPECT_THAT(*versions, ElementsAre(1, 2, 10));
  // Folder names are numbers: 0010 is version 10, and 011 is 11.
  fs::create_directories(fs::path(dir) / "011");
  versions = ListModelVersions(dir);
  EXPECT_THAT(*versions, ElementsAre(1, 2, 10, 11));
  EXPECT_THAT(*FindVersionFolder(dir, 11), EndsWith("/011"));
  fs::create_directories(fs::path(dir) / "0010");
  EXPECT_THAT(*ListModelVersions(dir), ElementsAre(1, 2, 10, 11));
  const absl::Status twice = FindVersionFolder(dir, 10).status();
  EXPECT_THAT(twice.message(), HasSubstr("2 folders for version 10"));
  EXPECT_THAT(twice.message(), HasSubstr("/0010, "));
  EXPECT_EQ(FindVersionFolder(dir, 4).status().code(),
            absl::StatusCode::kNotFound);

  const absl::Status missing = ListModelVersions(dir + "/absent").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("cannot list model folder"));
  EXPECT_THAT(missing.message(), HasSubstr("absent"));
}

TEST(LoadModelVersionTest, LoadsTheNetAndParameters) {
  const std::string dir = Folder("models") + "/mlp/";
  ASSERT_TRUE(WriteMlpVersion(dir, 3, 0).ok());
  absl::StatusOr<std::unique_ptr<ServedModel>> model =
      LoadModelVersion(dir, 3, {});
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->name, "mlp");  // The folder's name, trailing / or not.
  EXPECT_EQ((*model)->version, 3);
  EXPECT_EQ((*model)->predictor.inputs()[0].name, "image");
}

TEST(LoadModelVersionTest, ErrorsNameTheFolder) {
  const std::string dir = Folder("broken");
  fs::create_directories(dir + "/1");
  EXPECT_THAT(LoadModelVersion(dir, 1, {}).status().message(),
              HasSubstr("broken/1 has neither model.pb nor model.pbtxt"));
  ASSERT_TRUE(WriteFileAtomically(dir + "/1/model.pb", "").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/1/model.pbtxt", "").ok());
  EXPECT_THAT(LoadModelVersion(dir, 1, {}).status().message(),
              HasSubstr("broken/1 has both model.pb and model.pbtxt"));
  fs::remove(dir + "/1/model.pb");
  ASSERT_TRUE(
      WriteFileAtomically(dir + "/1/model.pbtxt", *ReadFile(kMlpNet)).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/1/params", "not params").ok());
  const absl::Status status = LoadModelVersion(dir, 1, {}).status();
  EXPECT_THAT(status.message(), HasSubstr("model folder "));
  EXPECT_THAT(status.message(), HasSubstr("broken/1: "));
  EXPECT_THAT(status.message(), HasSubstr("params"));
  fs::remove(dir + "/1/params");
  EXPECT_THAT(LoadModelVersion(dir, 1, {}).status().message(),
              HasSubstr("parameter \"fc1.w\" (float32 [64, 32]) is not in "
                        "the parameters"));
}

TEST(ModelManagerTest, NoVersionIsAnError) {
  const std::string dir = Folder("empty");
  ModelManager manager(dir, {}, nullptr);
  const absl::Status status = manager.LoadNewest();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("has no version folder"));
  EXPECT_EQ(manager.current(), nullptr);
}

TEST(ModelManagerTest, SwapsInNewerVersionsOnly) {
  const std::string dir = Folder("swap") + "/mlp";
  ASSERT_TRUE(WriteMlpVersion(dir, 1, 0).ok());
  ServeMetrics metrics;
  ModelManager manager(dir, {}, &metrics);
  EXPECT_EQ(manager.name(), "mlp");
  ASSERT_TRUE(manager.LoadNewest().ok());
  const std::shared_ptr<const ServedModel> first = manager.current();
  EXPECT_EQ(first->version, 1);
  EXPECT_FALSE(*manager.Poll());

  ASSERT_TRUE(WriteMlpVersion(dir, 2, 0.5).ok());
  EXPECT_TRUE(*manager.Poll());
  const std::shared_ptr<const ServedModel> second = manager.current();
  EXPECT_EQ(second->version, 2);
  // The old version still runs for whoever holds it, and answers apart.
  EXPECT_NE(FirstOutput(*first), FirstOutput(*second));

  // A broken newer version leaves the served one in place.
  fs::create_directories(dir + "/5");
  const absl::StatusOr<bool> broken = manager.Poll();
  EXPECT_THAT(broken.status().message(),
              HasSubstr("mlp/5 has neither model.pb nor model.pbtxt"));
  EXPECT_EQ(manager.current()->version, 2);
  EXPECT_THAT(metrics.Render("mlp", 2),
              HasSubstr("scopeflow_model_loads_total{result=\"error\"} 1"));
  // The broken version is not tried again, nor counted, until its files
  // change; then it is.
  EXPECT_FALSE(*manager.Poll());
  EXPECT_THAT(metrics.Render("mlp", 2),
              HasSubstr("scopeflow_model_loads_total{result=\"error\"} 1"));
  ASSERT_EQ(manager.versions().size(), 2);
  EXPECT_EQ(manager.versions()[1].version, 5);
  EXPECT_FALSE(manager.versions()[1].available);
  EXPECT_THAT(manager.versions()[1].error.message(),
              HasSubstr("neither model.pb"));
  ASSERT_TRUE(
      WriteFileAtomically(dir + "/5/model.pbtxt", "not a net {").ok());
  EXPECT_FALSE(manager.Poll().ok());
  EXPECT_THAT(metrics.Render("mlp", 2),
              HasSubstr("scopeflow_model_loads_total{result=\"error\"} 2"));
  // An older version appearing is not served.
  fs::remove_all(dir + "/5");
  fs::remove_all(dir + "/1");
  ASSERT_TRUE(WriteMlpVersion(dir, 1, 2).ok());
  EXPECT_FALSE(*manager.Poll());
  EXPECT_EQ(manager.current()->version, 2);
}

TEST(ModelManagerTest, BrokenNewestIsSkippedAtStartAsWhenRunning) {
  const std::string dir = Folder("broken_newest") + "/mlp";
  ASSERT_TRUE(WriteMlpVersion(dir, 1, 0).ok());
  fs::create_directories(dir + "/2");
  ServeMetrics metrics;
  ModelManager manager(dir, {}, &metrics);
  ASSERT_TRUE(manager.LoadNewest().ok());
  EXPECT_EQ(manager.current()->version, 1);
  ASSERT_EQ(manager.versions().size(), 2);
  EXPECT_FALSE(manager.versions()[1].available);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(*manager.Poll());
  EXPECT_THAT(metrics.Render(),
              HasSubstr("scopeflow_model_version_loads_total{model=\"mlp\","
                        "version=\"2\",result=\"error\"} 1\n"));
  // Only broken versions: an error naming the folder.
  const std::string bad = Folder("only_broken") + "/m";
  fs::create_directories(bad + "/3");
  ModelManager none(bad, {}, nullptr);
  EXPECT_THAT(none.LoadNewest().message(), HasSubstr("m/3 has neither"));
  EXPECT_EQ(none.current(), nullptr);
}

TEST(ModelManagerTest, ServesTheVersionsThePolicyNames) {
  const std::string dir = Folder("policy") + "/mlp";
  for (int v : {1, 2, 3}) ASSERT_TRUE(WriteMlpVersion(dir, v, v).ok());
  fs::create_directories(dir + "/4");  // Broken: the policy skips it.
  ModelManager manager(dir, {}, nullptr, VersionPolicy{2}, "named");
  EXPECT_EQ(manager.name(), "named");
  ASSERT_TRUE(manager.LoadNewest().ok());
  EXPECT_THAT(manager.served_versions(), ElementsAre(2, 3));
  EXPECT_EQ(manager.current()->version, 3);
  EXPECT_EQ(manager.current()->name, "named");
  EXPECT_EQ(manager.version(1), nullptr);
  const std::shared_ptr<const ServedModel> two = manager.version(2);
  ASSERT_NE(two, nullptr);

  VersionPolicy specific;
  specific.specific = {1, 3, 9};
  manager.SetPolicy(specific);
  EXPECT_TRUE(*manager.Poll());
  EXPECT_THAT(manager.served_versions(), ElementsAre(1, 3));
  // Version 2 was unloaded, but answers whoever still holds it.
  EXPECT_EQ(manager.version(2), nullptr);
  EXPECT_GT(FirstOutput(*two), -1);

  VersionPolicy all;
  all.all = true;
  manager.SetPolicy(all);
  EXPECT_TRUE(*manager.Poll());
  EXPECT_THAT(manager.served_versions(), ElementsAre(1, 2, 3));
  // A removed folder's version is unloaded; never the last one, though.
  fs::remove_all(dir + "/3");
  fs::remove_all(dir + "/4");
  EXPECT_TRUE(*manager.Poll());
  EXPECT_THAT(manager.served_versions(), ElementsAre(1, 2));
  EXPECT_THAT(manager.versions(), Not(IsEmpty()));
  fs::remove_all(dir + "/1");
  fs::remove_all(dir + "/2");
  EXPECT_FALSE(*manager.Poll());
  EXPECT_THAT(manager.served_versions(), ElementsAre(1, 2));
}

TEST(ModelManagerTest, PollingThreadSwapsAndStops) {
  const std::string dir = Folder("polling") + "/mlp";
  ASSERT_TRUE(WriteMlpVersion(dir, 1, 0).ok());
  ModelManager manager(dir, {}, nullptr);
  ASSERT_TRUE(manager.LoadNewest().ok());
  manager.StartPolling(absl::Milliseconds(10));
  ASSERT_TRUE(WriteMlpVersion(dir, 4, 1).ok());
  for (int i = 0; i < 1000 && manager.current()->version != 4; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(manager.current()->version, 4);
  manager.StopPolling();
  ASSERT_TRUE(WriteMlpVersion(dir, 5, 1).ok());
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(manager.current()->version, 4);
}

}  // namespace
}  // namespace scopeflow
