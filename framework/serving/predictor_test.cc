// Predictor on the MLP example: what it reports, results against a
// hand-computed reference, input and load errors, clones, scope reuse and
// memory the caller owns. Concurrency is in predictor_concurrency_test.cc.
#include "framework/serving/predictor.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "framework/net_io.h"
#include "framework/param_io.h"
#include "framework/serving/mlp_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/allocator.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

Predictor Mlp() {
  absl::StatusOr<Predictor> predictor = LoadMlp();
  EXPECT_TRUE(predictor.ok()) << predictor.status();
  return *std::move(predictor);
}

void ExpectMatchesReference(const Predictor& predictor, const Tensor& image,
                            const Tensor& probabilities) {
  ASSERT_THAT(probabilities.dims(), ElementsAre(image.dim(0), 10));
  const std::vector<double> expected =
      ReferenceMlp(predictor.parameters(), image);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(probabilities.data<float>()[i], expected[i], 1e-6) << i;
  }
}

absl::Status RunStatus(const Predictor& predictor, std::vector<Feed> feeds) {
  return predictor.Run(feeds).status();
}

TEST(PredictorTest, ReportsInputsAndOutputs) {
  Predictor predictor = Mlp();
  EXPECT_EQ(predictor.name(), "mlp");
  EXPECT_EQ(predictor.place(), CPUPlace());
  ASSERT_EQ(predictor.inputs().size(), 1);
  EXPECT_EQ(predictor.inputs()[0].name, "image");
  EXPECT_EQ(predictor.inputs()[0].dtype, kFloat32);
  EXPECT_TRUE(predictor.inputs()[0].has_dims);
  EXPECT_THAT(predictor.inputs()[0].dims, ElementsAre(-1, 64));
  ASSERT_EQ(predictor.outputs().size(), 1);
  EXPECT_EQ(predictor.outputs()[0].DebugString(),
            "probabilities: float32 [-1, 10]");
}

TEST(PredictorTest, RunMatchesHandComputedMlp) {
  Predictor predictor = Mlp();
  for (int batch : {1, 3, 8}) {
    const Tensor image = MlpInput(batch, batch);
    absl::StatusOr<std::vector<Tensor>> out =
        predictor.Run({Feed{"image", image}});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1);
    ExpectMatchesReference(predictor, image, (*out)[0]);
  }
}

TEST(PredictorTest, ChosenOutputsComeInTheOrderAsked) {
  absl::StatusOr<NetDef> net = LoadNet(kMlpNet);
  ASSERT_TRUE(net.ok());
  PredictorOptions options;
  options.outputs = {"probabilities", "hidden.relu"};
  absl::StatusOr<Predictor> predictor =
      Predictor::Create(*net, *MlpParameters(), options);
  ASSERT_TRUE(predictor.ok()) << predictor.status();
  EXPECT_EQ(predictor->outputs()[1].DebugString(),
            "hidden.relu: float32 [-1, 32]");
  absl::StatusOr<std::vector<Tensor>> out =
      predictor->Run({Feed{"image", MlpInput(2, 0)}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT((*out)[0].dims(), ElementsAre(2, 10));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 32));
  for (int64_t i = 0; i < (*out)[1].numel(); ++i) {
    EXPECT_GE((*out)[1].data<float>()[i], 0) << "relu output " << i;
  }
}

TEST(PredictorTest, LoadReadsTheNetAndParameterFiles) {
  absl::StatusOr<std::unique_ptr<Scope>> parameters = MlpParameters();
  ASSERT_TRUE(parameters.ok());
  const std::string path = TempPath("mlp.params");
  ASSERT_TRUE(
      SaveParams(**parameters, {"fc1.w", "fc1.b", "fc2.w", "fc2.b"}, path)
          .ok());
  absl::StatusOr<Predictor> loaded = Predictor::Load(kMlpNet, path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Tensor image = MlpInput(4, 7);
  absl::StatusOr<std::vector<Tensor>> out = loaded->Run({Feed{"image", image}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectMatchesReference(*loaded, image, (*out)[0]);

  EXPECT_THAT(
      Predictor::Load(kMlpNet, TempPath("absent.params")).status().message(),
      HasSubstr("absent.params"));
  EXPECT_THAT(Predictor::Load("absent.pbtxt", path).status().message(),
              HasSubstr("absent.pbtxt"));
}

TEST(PredictorTest, InputErrorsNameTheInput) {
  Predictor predictor = Mlp();
  const Tensor image = MlpInput(2, 0);
  EXPECT_THAT(
      RunStatus(predictor, {{"image", image}, {"label", image}}).message(),
      HasSubstr("unknown input \"label\" (the model's inputs: image)"));
  EXPECT_THAT(
      RunStatus(predictor, {{"image", image}, {"image", image}}).message(),
      HasSubstr("input \"image\" is given twice"));
  EXPECT_THAT(RunStatus(predictor, {}).message(),
              HasSubstr("missing input \"image\" (float32 [-1, 64])"));
  Tensor ints;
  ASSERT_TRUE(ints.Allocate(CPUPlace(), kInt32, {2, 64}).ok());
  EXPECT_THAT(RunStatus(predictor, {{"image", ints}}).message(),
              HasSubstr("input \"image\": expected dtype float32, got int32"));
  Tensor narrow;
  ASSERT_TRUE(narrow.Allocate(CPUPlace(), kFloat32, {2, 63}).ok());
  EXPECT_THAT(
      RunStatus(predictor, {{"image", narrow}}).message(),
      HasSubstr("input \"image\": expected shape [-1, 64], got [2, 63]"));
  Tensor flat;
  ASSERT_TRUE(flat.Allocate(CPUPlace(), kFloat32, {64}).ok());
  const absl::Status status = RunStatus(predictor, {{"image", flat}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("input \"image\": expected shape [-1, 64], got [64]"));
  // Still serving after the errors.
  EXPECT_TRUE(RunStatus(predictor, {{"image", image}}).ok());
}

TEST(PredictorTest, CreateErrorsNameTheProblem) {
  absl::StatusOr<NetDef> net = LoadNet(kMlpNet);
  ASSERT_TRUE(net.ok());
  EXPECT_THAT(
      Predictor::Create(*net, std::make_unique<Scope>()).status().message(),
      HasSubstr("parameter \"fc1.w\" (float32 [64, 32]) is not in "
                "the parameters"));

  std::unique_ptr<Scope> wrong = *MlpParameters();
  Tensor* w2 = *wrong->FindVar("fc2.w")->GetMutable<Tensor>();
  ASSERT_TRUE(w2->Allocate(CPUPlace(), kFloat32, {32, 11}).ok());
  EXPECT_THAT(Predictor::Create(*net, std::move(wrong)).status().message(),
              HasSubstr("parameter \"fc2.w\" is declared as float32 [32, 10] "
                        "on cpu; the parameters hold Tensor<float32, [32, 11], "
                        "cpu>"));

  absl::StatusOr<NetDef> startup = LoadNet(kMlpStartup);
  ASSERT_TRUE(startup.ok());
  EXPECT_THAT(
      Predictor::Create(*startup, std::make_unique<Scope>()).status().message(),
      HasSubstr("op 0 (gaussian_random) writes parameter \"fc1.w\"; "
                "runs of a Predictor share its parameters"));

  PredictorOptions options;
  options.outputs = {"logits", "scores"};
  EXPECT_THAT(
      Predictor::Create(*net, *MlpParameters(), options).status().message(),
      HasSubstr("net \"mlp\" has no variable \"scores\" to output"));

  EXPECT_THAT(Predictor::Create(*net, nullptr).status().message(),
              HasSubstr("the parameter scope is null"));

  NetDef broken = *net;
  broken.mutable_blocks(0)->mutable_ops(1)->set_type("no_such_op");
  EXPECT_THAT(Predictor::Create(broken, *MlpParameters()).status().message(),
              HasSubstr("unknown op type \"no_such_op\""));
}

TEST(PredictorTest, CloneSharesTheParameters) {
  absl::StatusOr<Predictor> original = LoadMlp();
  ASSERT_TRUE(original.ok());
  const Tensor image = MlpInput(3, 1);
  absl::StatusOr<std::vector<Tensor>> expected =
      original->Run({Feed{"image", image}});
  ASSERT_TRUE(expected.ok());

  const int64_t before = (*GetAllocatorStats(CPUPlace())).bytes_in_use;
  Predictor clone = original->Clone();
  EXPECT_EQ((*GetAllocatorStats(CPUPlace())).bytes_in_use, before);
  EXPECT_EQ(&clone.parameters(), &original->parameters());
  EXPECT_EQ(clone.pooled_scopes(), 0);  // Its own pool, empty until it runs.

  // The clone outlives the original.
  *original = std::move(clone);
  absl::StatusOr<std::vector<Tensor>> out =
      original->Run({Feed{"image", image}});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < (*out)[0].numel(); ++i) {
    EXPECT_EQ((*out)[0].data<float>()[i], (*expected)[0].data<float>()[i]);
  }
}

TEST(PredictorTest, AssigningAnotherModelReleasesTheOldOne) {
  Predictor predictor = Mlp();
  const Tensor image = MlpInput(1, 2);
  ASSERT_TRUE(predictor.Run({Feed{"image", image}}).ok());
  // The old model's last holder: its scopes and parameters go.
  predictor = Mlp();
  EXPECT_EQ(predictor.pooled_scopes(), 0);
  absl::StatusOr<std::vector<Tensor>> out =
      predictor.Run({Feed{"image", image}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectMatchesReference(predictor, image, (*out)[0]);
}

TEST(PredictorTest, RepeatedRunsCreateNoScopes) {
  Predictor predictor = Mlp();
  const std::vector<Feed> feeds = {{"image", MlpInput(2, 0)}};
  ASSERT_TRUE(predictor.Run(feeds).ok());
  EXPECT_EQ(predictor.pooled_scopes(), 1);
  EXPECT_EQ(predictor.parameters().num_kids(), 1);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(predictor.Run(feeds).ok());
  EXPECT_EQ(predictor.pooled_scopes(), 1);
  EXPECT_EQ(predictor.parameters().num_kids(), 1);
  {
    Predictor clone = predictor.Clone();
    ASSERT_TRUE(clone.Run(feeds).ok());
    EXPECT_EQ(predictor.parameters().num_kids(), 2);
  }
  // A clone's scopes go with it.
  EXPECT_EQ(predictor.parameters().num_kids(), 1);
}

TEST(PredictorTest, RunsOnMemoryTheCallerOwns) {
  Predictor predictor = Mlp();
  const Tensor owned = MlpInput(2, 5);
  std::vector<float> values(owned.data<float>(),
                            owned.data<float>() + owned.numel());
  int released = 0;
  {
    absl::StatusOr<Tensor> image =
        Tensor::FromExternal(values.data(), kFloat32, {2, 64}, CPUPlace(),
                             [&released] { ++released; });
    ASSERT_TRUE(image.ok());
    absl::StatusOr<std::vector<Tensor>> out =
        predictor.Run({Feed{"image", *image}});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectMatchesReference(predictor, owned, (*out)[0]);
    EXPECT_EQ(released, 0);
  }
  // The run kept no view of the caller's memory.
  EXPECT_EQ(released, 1);
}

}  // namespace
}  // namespace scopeflow
