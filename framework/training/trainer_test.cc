#include "framework/training/trainer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "framework/net_io.h"
#include "framework/training/checkpoint.h"
#include "framework/training/optimizer.h"
#include "framework/training/toy_problem.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::filesystem::remove_all(path);
  return path;
}

NetDef Parse(const std::string& text) {
  NetDef net;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &net));
  return net;
}

TrainerOptions Options(const std::string& optimizer) {
  TrainerOptions options;
  options.batch_size = 16;
  options.epochs = 5;
  options.optimizer.type = optimizer;
  options.optimizer.learning_rate = optimizer == "adam" ? 0.01f : 0.1f;
  return options;
}

std::vector<float> Weights(Trainer& trainer, const std::string& name) {
  const Tensor* tensor = *trainer.scope().FindVar(name)->Get<Tensor>();
  return std::vector<float>(tensor->data<float>(),
                            tensor->data<float>() + tensor->numel());
}

class TrainerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainerTest, LearnsSeparableClusters) {
  const Dataset data = Clusters(240);
  auto trainer =
      Trainer::Create(ToyStartupNet(), ToyMainNet(), Options(GetParam()));
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  ASSERT_TRUE((*trainer)->Initialize().ok());
  auto before = (*trainer)->Evaluate(data);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE((*trainer)->Fit(data, data, nullptr, nullptr).ok());
  auto after = (*trainer)->Evaluate(data);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_LT(after->loss, before->loss / 2);
  EXPECT_GT(after->accuracy, 0.95);
  EXPECT_EQ(*(*trainer)->step(), 5 * (240 / 16));
}

TEST_P(TrainerTest, ResumingIsBitIdenticalToTrainingStraight) {
  const Dataset data = Clusters(100);  // 6 steps per epoch, 4 left over
  TrainerOptions options = Options(GetParam());
  options.checkpoint_dir = TempDir("resume_" + GetParam());

  auto straight = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_TRUE(straight.ok()) << straight.status();
  ASSERT_TRUE((*straight)->Initialize().ok());
  ASSERT_TRUE((*straight)->TrainUntil(data, 17, nullptr).ok());

  {
    auto first = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE((*first)->Initialize().ok());
    // Stops in the middle of an epoch.
    ASSERT_TRUE((*first)->TrainUntil(data, 8, nullptr).ok());
    ASSERT_TRUE((*first)->SaveCheckpoint().ok());
  }
  auto resumed = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE((*resumed)->Initialize().ok());
  auto loaded = (*resumed)->Resume();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(*loaded);
  EXPECT_EQ(*(*resumed)->step(), 8);
  ASSERT_TRUE((*resumed)->TrainUntil(data, 17, nullptr).ok());

  for (const std::string& name : (*straight)->state_names()) {
    const Tensor* a = *(*straight)->scope().FindVar(name)->Get<Tensor>();
    const Tensor* b = *(*resumed)->scope().FindVar(name)->Get<Tensor>();
    ASSERT_EQ(a->nbytes(), b->nbytes()) << name;
    EXPECT_EQ(std::memcmp(a->raw_data(), b->raw_data(), a->nbytes()), 0)
        << name << " differs after resuming";
  }
  EXPECT_EQ(Weights(**straight, "w1"), Weights(**resumed, "w1"));
}

// Batches fed one by one (as from a caller's data iterator) train exactly
// as TrainUntil does on the same batches, and EvaluateBatch agrees with
// Evaluate.
TEST_P(TrainerTest, CallerFedStepsMatchTrainUntil) {
  const Dataset data = Clusters(64);  // 4 steps per epoch
  const TrainerOptions options = Options(GetParam());
  auto whole = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE((*whole)->Initialize().ok());
  ASSERT_TRUE((*whole)->TrainUntil(data, 6, nullptr).ok());

  TrainerOptions fed_options = options;
  fed_options.features_feed = "";
  fed_options.labels_feed = "";
  auto fed = Trainer::Create(ToyStartupNet(), ToyMainNet(), fed_options);
  ASSERT_TRUE(fed.ok()) << fed.status();
  ASSERT_TRUE((*fed)->Initialize().ok());
  for (int64_t step = 0; step < 6; ++step) {
    const std::vector<int64_t> order = EpochOrder(data.size(), 1, step / 4);
    const int64_t begin = (step % 4) * options.batch_size;
    auto batch = Gather(data, std::vector<int64_t>(
                                  order.begin() + begin,
                                  order.begin() + begin + options.batch_size));
    ASSERT_TRUE(batch.ok());
    auto loss = (*fed)->TrainStep(
        {{"image", batch->features}, {"label", batch->labels}});
    ASSERT_TRUE(loss.ok()) << loss.status();
    EXPECT_TRUE(std::isfinite(*loss));
  }
  EXPECT_EQ(*(*fed)->step(), 6);
  EXPECT_EQ(Weights(**whole, "w1"), Weights(**fed, "w1"));

  // The two hold the same weights; the fed one has no feed names for a
  // Dataset, so the other evaluates the whole set.
  auto all = (*whole)->Evaluate(data);
  ASSERT_TRUE(all.ok()) << all.status();
  auto one = (*fed)->EvaluateBatch(
      {{"image", data.features}, {"label", data.labels}});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_NEAR(one->first, all->loss, 1e-5);
  EXPECT_NEAR(one->second, all->accuracy, 1e-6);
  EXPECT_THAT(
      (*fed)->TrainStep({{"image", data.features}}).status().message(),
      HasSubstr("input \"label\" is not fed"));
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainerTest,
                         ::testing::Values("sgd", "momentum", "adam"));

TEST(TrainerErrorsTest, NamesWhatIsWrong) {
  TrainerOptions options = Options("adam");
  options.features_feed = "pixels";
  auto no_feed = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_FALSE(no_feed.ok());
  EXPECT_THAT(no_feed.status().message(), HasSubstr("no input \"pixels\""));

  options = Options("adagrad");
  auto bad_optimizer = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_FALSE(bad_optimizer.ok());
  EXPECT_THAT(bad_optimizer.status().message(),
              HasSubstr("unknown optimizer \"adagrad\""));

  options = Options("sgd");
  options.loss = "label";
  auto int_loss = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_FALSE(int_loss.ok());
  EXPECT_THAT(int_loss.status().message(), HasSubstr("target \"label\""));

  options = Options("sgd");
  auto trainer = Trainer::Create(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_TRUE(trainer.ok());
  EXPECT_THAT((*trainer)->Resume().status().message(),
              HasSubstr("no checkpoint directory"));
  // Training before initialising: no step counter yet.
  EXPECT_THAT((*trainer)->TrainUntil(Clusters(30), 1, nullptr).message(),
              HasSubstr("initialise or resume first"));
}

// Seeded by its attribute alone, dropout would drop the same units at every
// step; training seeds it with the step counter too.
TEST(AppendTrainingOpsTest, SeedsDropoutWithTheStepCounter) {
  NetDef main = ToyMainNet();
  OpDef& dropout = *main.mutable_blocks(0)->mutable_ops()->Add();
  dropout.set_type("dropout");
  OpSlot* in = dropout.add_inputs();
  in->set_slot("X");
  in->add_vars("hr");
  OpSlot* out = dropout.add_outputs();
  out->set_slot("Out");
  out->add_vars("hr.dropped");
  OpSlot* mask = dropout.add_outputs();
  mask->set_slot("Mask");
  mask->add_vars("hr.mask");
  // Move it right after the relu, so that the second fc reads its output.
  auto* ops = main.mutable_blocks(0)->mutable_ops();
  for (int i = ops->size() - 1; i > 2; --i) ops->SwapElements(i, i - 1);
  ops->Mutable(3)->mutable_inputs(0)->set_vars(0, "hr.dropped");
  NetDef startup = ToyStartupNet();
  const auto appended =
      AppendTrainingOps(main, startup, "loss", OptimizerConfig());
  ASSERT_TRUE(appended.ok()) << appended.status();
  const OpDef& trained = main.blocks(0).ops(2);
  ASSERT_EQ(trained.type(), "dropout");
  ASSERT_EQ(trained.inputs_size(), 2);
  EXPECT_EQ(trained.inputs(1).slot(), "Seed");
  EXPECT_EQ(trained.inputs(1).vars(0), kStepVar);
}

TEST(ForInferenceTest, SetsIsTestOnOpsThatHaveIt) {
  NetDef net = Parse(
      "format_version: 1 name: \"d\" blocks { ops { type: \"dropout\" inputs "
      "{ slot: \"X\" vars: \"x\" } outputs { slot: \"Out\" vars: \"y\" } } "
      "ops { type: \"relu\" inputs { slot: \"X\" vars: \"y\" } outputs { "
      "slot: \"Out\" vars: \"z\" } } }");
  NetDef inference = ForInference(net);
  ASSERT_EQ(inference.blocks(0).ops(0).attrs_size(), 1);
  EXPECT_EQ(inference.blocks(0).ops(0).attrs(0).name(), "is_test");
  EXPECT_TRUE(inference.blocks(0).ops(0).attrs(0).b());
  EXPECT_EQ(inference.blocks(0).ops(1).attrs_size(), 0);
}

TEST(ForInferenceTest, DropsTheListsOfScopesOfControlFlowOps) {
  NetDef net = Parse(
      "format_version: 1 name: \"c\" blocks { ops { type: "
      "\"conditional_block\" inputs { slot: \"Cond\" vars: \"c\" } "
      "outputs { slot: \"Out\" vars: \"y\" } outputs { slot: \"Scope\" "
      "vars: \"kept\" } attrs { name: \"sub_block\" block_idx: 1 } } } "
      "blocks { parent_idx: 0 }");
  NetDef inference = ForInference(net);
  ASSERT_EQ(inference.blocks(0).ops(0).outputs_size(), 1);
  EXPECT_EQ(inference.blocks(0).ops(0).outputs(0).slot(), "Out");
  EXPECT_EQ(net.blocks(0).ops(0).outputs_size(), 2);
}

}  // namespace
}  // namespace scopeflow
