#include "tools/serve_repository.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "tools/serve_predict.h"
#include "tools/serve_testing.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Folder(const std::string& name) {
  const fs::path path = fs::path(std::getenv("TEST_TMPDIR")) / name;
  fs::remove_all(path);
  fs::create_directories(path);
  return path.string();
}

TEST(ReadModelConfigFileTest, ReadsTensorFlowServingsFormat) {
  const std::string dir = Folder("config");
  const std::string path = dir + "/models.config";
  ASSERT_TRUE(WriteFileAtomically(path, R"(
model_config_list {
  config {
    name: 'first'
    base_path: '/srv/models/first/'
    model_platform: 'tensorflow'
  }
  config {
    name: "second"
    base_path: "relative/second"
    model_version_policy { latest { num_versions: 2 } }
  }
  config {
    name: 'third'
    base_path: '/srv/third'
    model_version_policy { specific { versions: 42 versions: 43 } }
  }
  config {
    name: 'fourth'
    base_path: '/srv/fourth'
    model_version_policy { all {} }
  }
}
)")
                  .ok());
  absl::StatusOr<std::vector<ModelSource>> sources = ReadModelConfigFile(path);
  ASSERT_TRUE(sources.ok()) << sources.status();
  ASSERT_EQ(sources->size(), 4);
  EXPECT_EQ((*sources)[0].name, "first");
  EXPECT_EQ((*sources)[0].base_path, "/srv/models/first/");
  EXPECT_EQ((*sources)[0].policy.latest, 1);
  // A relative base_path is taken from the config file's folder.
  EXPECT_EQ((*sources)[1].base_path, dir + "/relative/second");
  EXPECT_EQ((*sources)[1].policy.latest, 2);
  EXPECT_THAT((*sources)[2].policy.specific, ElementsAre(42, 43));
  EXPECT_TRUE((*sources)[3].policy.all);
}

TEST(ReadModelConfigFileTest, ErrorsNameTheFileAndProblem) {
  const std::string dir = Folder("bad_config");
  const std::string path = dir + "/models.config";
  auto error = [&](const std::string& text) {
    EXPECT_TRUE(WriteFileAtomically(path, text).ok());
    return std::string(ReadModelConfigFile(path).status().message());
  };
  EXPECT_THAT(error("model_config_list { config { nme: 'a' } }"),
              HasSubstr("line 1 column "));
  EXPECT_THAT(error("model_config_list { config { nme: 'a' } }"),
              HasSubstr("no field named \"nme\""));
  EXPECT_THAT(error("model_config_list { config { base_path: '/a' } }"),
              HasSubstr("a model has no name"));
  EXPECT_THAT(error("model_config_list { config { name: 'a' } }"),
              HasSubstr("model \"a\" has no base_path"));
  EXPECT_THAT(error("model_config_list { config { name: 'a' base_path: 'x' } "
                    "config { name: 'a' base_path: 'y' } }"),
              HasSubstr("two models are named \"a\""));
  EXPECT_THAT(error("model_config_list { config { name: 'a:b' base_path: 'x' "
                    "} }"),
              HasSubstr("has a / or :"));
  EXPECT_THAT(error("model_config_list { config { name: 'a' base_path: 'x' "
                    "model_version_policy { specific {} } } }"),
              HasSubstr("specific version policy naming no version"));
  EXPECT_EQ(ReadModelConfigFile(dir + "/absent").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ListModelRepositoryTest, EveryFolderIsAModel) {
  const std::string root = Folder("repository");
  fs::create_directories(root + "/b");
  fs::create_directories(root + "/a");
  fs::create_directories(root + "/.staging");
  ASSERT_TRUE(WriteFileAtomically(root + "/README", "not a model").ok());
  absl::StatusOr<std::vector<ModelSource>> sources = ListModelRepository(root);
  ASSERT_TRUE(sources.ok()) << sources.status();
  ASSERT_EQ(sources->size(), 2);
  EXPECT_EQ((*sources)[0].name, "a");
  EXPECT_EQ((*sources)[0].base_path, root + "/a");
  EXPECT_EQ((*sources)[1].name, "b");
  EXPECT_THAT(ListModelRepository(root + "/absent").status().message(),
              HasSubstr("cannot list model repository"));
}

TEST(ModelRepositoryTest, AddsAndRemovesModelsWithoutTouchingTheOthers) {
  const std::string root = Folder("live");
  ASSERT_TRUE(WriteMlpVersion(root + "/a", 1, 0).ok());
  ASSERT_TRUE(WriteMlpVersion(root + "/b", 3, 1).ok());
  ServeMetrics metrics;
  ModelRepository models([root] { return ListModelRepository(root); }, {},
                         &metrics);
  ASSERT_TRUE(models.Load().ok());
  EXPECT_THAT(models.names(), ElementsAre("a", "b"));
  EXPECT_TRUE(models.ready());
  const std::shared_ptr<ModelManager> a = models.Find("a");
  const std::shared_ptr<const ServedModel> b = *models.Resolve("b", 0);
  EXPECT_EQ(b->version, 3);
  EXPECT_EQ((*models.Resolve("b", 3))->version, 3);

  // Resolve's errors.
  EXPECT_THAT(models.Resolve("c", 0).status().message(),
              HasSubstr("unknown model \"c\" (this server serves: a, b)"));
  EXPECT_EQ(models.Resolve("b", 2).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(models.Resolve("b", 2).status().message(),
              HasSubstr("no version 2 served (versions served: 3)"));

  // Model b goes, c comes; a is the same object, still serving version 1.
  fs::rename(root + "/b", root + "/.b-removed");
  ASSERT_TRUE(WriteMlpVersion(root + "/c", 1, 2).ok());
  ASSERT_TRUE(models.Poll().ok());
  EXPECT_THAT(models.names(), ElementsAre("a", "c"));
  EXPECT_EQ(models.Find("a"), a);
  EXPECT_EQ(models.Find("b"), nullptr);
  EXPECT_EQ((*models.Resolve("a", 0))->version, 1);
  // The removed model still answers whoever holds it.
  EXPECT_TRUE(b->predictor.Run({Feed{"image", MlpInput(1, 0)}}).ok());
  EXPECT_THAT(metrics.Render(), HasSubstr("scopeflow_model_version{model="
                                          "\"c\"} 1\n"));
  EXPECT_THAT(
      metrics.Render(),
      ::testing::Not(HasSubstr("scopeflow_model_version{model=\"b\"}")));

  // A model with only a broken version is listed, not ready, and reported.
  fs::create_directories(root + "/d/1");
  const absl::Status polled = models.Poll();
  EXPECT_THAT(polled.message(), HasSubstr("model d: "));
  EXPECT_THAT(polled.message(), HasSubstr("d/1 has neither"));
  EXPECT_FALSE(models.ready());
  EXPECT_EQ(models.Resolve("d", 0).status().code(),
            absl::StatusCode::kUnavailable);
  // It is not tried again until its files change.
  EXPECT_THAT(metrics.Render(),
              HasSubstr("scopeflow_model_loads_total{result=\"error\"} 1\n"));
  (void)models.Poll();
  EXPECT_THAT(metrics.Render(),
              HasSubstr("scopeflow_model_loads_total{result=\"error\"} 1\n"));
}

TEST(ModelRepositoryTest, AnswersThroughSwapsAndOtherModelsComingAndGoing) {
  const std::string root = Folder("under_load");
  ASSERT_TRUE(WriteMlpVersion(root + "/a", 1, 0).ok());
  ASSERT_TRUE(WriteMlpVersion(root + "/b", 1, 0).ok());
  ServeMetrics metrics;
  ModelRepository models([root] { return ListModelRepository(root); }, {},
                         &metrics);
  ASSERT_TRUE(models.Load().ok());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 2; ++c) {
    clients.emplace_back([&, c] {
      const Tensor image = MlpInput(1, c);
      while (!stop) {
        absl::StatusOr<std::shared_ptr<const ServedModel>> model =
            models.Resolve("a", 0);
        const bool ok =
            model.ok() && RunServedModel(**model, {Feed{"image", image}}).ok();
        (ok ? answered : failures).fetch_add(1);
      }
    });
  }
  // Versions of a swap in while b is removed and added back.
  for (int v = 2; v <= 5; ++v) {
    // Clients keep running here: no ASSERT, which would leave them joinable.
    while (answered.load() < 20 * (v - 1) && failures.load() == 0) {
      std::this_thread::yield();
    }
    EXPECT_TRUE(WriteMlpVersion(root + "/a", v, v).ok());
    fs::rename(root + (v % 2 == 0 ? "/b" : "/.b-away"),
               root + (v % 2 == 0 ? "/.b-away" : "/b"));
    EXPECT_TRUE(models.Poll().ok());
    EXPECT_EQ(models.ServedVersions("a"), std::vector<int64_t>{v});
    EXPECT_EQ(models.Find("b") == nullptr, v % 2 == 0);
  }
  while (answered.load() < 100 && failures.load() == 0) {
    std::this_thread::yield();
  }
  stop = true;
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failures.load(), 0);
  // Every run is counted under the version that ran it.
  EXPECT_THAT(metrics.Render(),
              HasSubstr("scopeflow_compute_duration_seconds_count{model="
                        "\"a\",version=\"1\"}"));
}

TEST(ModelRepositoryTest, ConfigFilePolicyChangesApply) {
  const std::string dir = Folder("policy_change");
  for (int v : {1, 2, 3}) ASSERT_TRUE(WriteMlpVersion(dir + "/m", v, v).ok());
  const std::string config = dir + "/models.config";
  ASSERT_TRUE(
      WriteFileAtomically(
          config, "model_config_list { config { name: 'm' base_path: 'm' } }")
          .ok());
  ModelRepository models([config] { return ReadModelConfigFile(config); }, {},
                         nullptr);
  ASSERT_TRUE(models.Load().ok());
  EXPECT_THAT(models.Find("m")->served_versions(), ElementsAre(3));
  ASSERT_TRUE(WriteFileAtomically(
                  config,
                  "model_config_list { config { name: 'm' base_path: 'm' "
                  "model_version_policy { specific { versions: 1 versions: 2 "
                  "} } } }")
                  .ok());
  ASSERT_TRUE(models.Poll().ok());
  EXPECT_THAT(models.Find("m")->served_versions(), ElementsAre(1, 2));
  // An empty list serves nothing: Load says so.
  ASSERT_TRUE(WriteFileAtomically(config, "").ok());
  ModelRepository none([config] { return ReadModelConfigFile(config); }, {},
                       nullptr);
  EXPECT_THAT(none.Load().message(), HasSubstr("the model list is empty"));
}

}  // namespace
}  // namespace scopeflow
