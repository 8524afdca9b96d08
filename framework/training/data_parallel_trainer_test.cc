#include "framework/training/data_parallel_trainer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "framework/training/checkpoint.h"
#include "framework/training/toy_problem.h"
#include "framework/training/trainer.h"
#include "gmock/gmock.h"
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

TrainerOptions Options(const std::string& optimizer, int64_t batch) {
  TrainerOptions options;
  options.batch_size = batch;
  options.epochs = 3;
  options.optimizer.type = optimizer;
  options.optimizer.learning_rate = optimizer == "adam" ? 0.01f : 0.1f;
  return options;
}

std::vector<float> Values(Scope& scope, const std::string& name) {
  const Variable* var = scope.FindLocalVar(name);
  EXPECT_NE(var, nullptr) << name;
  if (var == nullptr) return {};
  const Tensor* tensor = *var->Get<Tensor>();
  return std::vector<float>(tensor->data<float>(),
                            tensor->data<float>() + tensor->numel());
}

// Every float32 state variable of `names` in both scopes agrees within
// `tolerance` (relative to the larger magnitude, absolute below 1), or
// bit for bit with a tolerance of 0.
void ExpectSameState(Scope& expected, Scope& actual,
                     const std::vector<std::string>& names, double tolerance) {
  for (const std::string& name : names) {
    const Tensor* tensor = *expected.FindLocalVar(name)->Get<Tensor>();
    if (tensor->dtype() != kFloat32) continue;
    const std::vector<float> want = Values(expected, name);
    const std::vector<float> got = Values(actual, name);
    ASSERT_EQ(want.size(), got.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      if (tolerance == 0) {
        ASSERT_EQ(std::memcmp(&want[i], &got[i], sizeof(float)), 0)
            << name << "[" << i << "]: " << want[i] << " vs " << got[i];
      } else {
        const double scale = std::max(
            1.0, std::max(std::abs(double{want[i]}), std::abs(double{got[i]})));
        ASSERT_NEAR(want[i], got[i], tolerance * scale)
            << name << "[" << i << "]";
      }
    }
  }
}

// The toy net with a batch_norm between its first fc and the relu: scale
// "bn.scale" and bias "bn.bias" learnt, running statistics "bn.mean" and
// "bn.variance" kept; the fc before it has no bias.
void AddBatchNorm(NetDef& startup, NetDef& main) {
  BlockDef& block = *main.mutable_blocks(0);
  for (const char* name : {"bn.scale", "bn.bias", "bn.mean", "bn.variance"}) {
    for (BlockDef* b : {&block, startup.mutable_blocks(0)}) {
      VarDef* var = b->add_vars();
      var->set_name(name);
      var->set_dtype(DATA_TYPE_FLOAT32);
      var->add_shape(8);
      var->set_persistable(true);
    }
    OpDef* fill = startup.mutable_blocks(0)->add_ops();
    fill->set_type("fill_constant");
    OpSlot* out = fill->add_outputs();
    out->set_slot("Out");
    out->add_vars(name);
    AttrDef* shape = fill->add_attrs();
    shape->set_name("shape");
    shape->mutable_i64s()->add_values(8);
    AttrDef* value = fill->add_attrs();
    value->set_name("value");
    const std::string n = name;
    value->set_f(n == "bn.scale" || n == "bn.variance" ? 1.0f : 0.0f);
  }
  OpDef bn;
  bn.set_type("batch_norm");
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"X", "h"},
      {"Scale", "bn.scale"},
      {"Bias", "bn.bias"},
      {"Mean", "bn.mean"},
      {"Variance", "bn.variance"}};
  for (const auto& [slot, var] : inputs) {
    OpSlot* in = bn.add_inputs();
    in->set_slot(slot);
    in->add_vars(var);
  }
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {"Y", "hn"},
      {"MeanOut", "bn.mean"},
      {"VarianceOut", "bn.variance"},
      {"SavedMean", "bn.saved_mean"},
      {"SavedVariance", "bn.saved_variance"}};
  for (const auto& [slot, var] : outputs) {
    OpSlot* out = bn.add_outputs();
    out->set_slot(slot);
    out->add_vars(var);
  }
  AttrDef* is_test = bn.add_attrs();
  is_test->set_name("is_test");
  is_test->set_b(false);
  // The first fc loses its bias, which batch norm would cancel: its
  // gradient is rounding noise, which Adam would scale up to full steps.
  auto* fc_inputs = block.mutable_ops(0)->mutable_inputs();
  for (int i = fc_inputs->size() - 1; i >= 0; --i) {
    if (fc_inputs->Get(i).slot() == "Bias") fc_inputs->DeleteSubrange(i, 1);
  }
  // The relu (op 1) reads the normalised values.
  block.mutable_ops(1)->mutable_inputs(0)->set_vars(0, "hn");
  auto* ops = block.mutable_ops();
  ops->Add(std::move(bn));
  for (int i = ops->size() - 1; i > 1; --i) ops->SwapElements(i, i - 1);
}

// The toy net with dropout (probability 0.5) after the relu.
void AddDropout(NetDef& main) {
  BlockDef& block = *main.mutable_blocks(0);
  OpDef dropout;
  dropout.set_type("dropout");
  OpSlot* in = dropout.add_inputs();
  in->set_slot("X");
  in->add_vars("hr");
  OpSlot* out = dropout.add_outputs();
  out->set_slot("Out");
  out->add_vars("hd");
  OpSlot* mask = dropout.add_outputs();
  mask->set_slot("Mask");
  mask->add_vars("hd.mask");
  AttrDef* p = dropout.add_attrs();
  p->set_name("dropout_prob");
  p->set_f(0.5f);
  AttrDef* seed = dropout.add_attrs();
  seed->set_name("seed");
  seed->set_i(7);
  // The second fc (op 2) reads the kept units.
  block.mutable_ops(2)->mutable_inputs(0)->set_vars(0, "hd");
  auto* ops = block.mutable_ops();
  ops->Add(std::move(dropout));
  for (int i = ops->size() - 1; i > 2; --i) ops->SwapElements(i, i - 1);
}

std::unique_ptr<Trainer> SingleTrainer(const NetDef& startup,
                                       const NetDef& main,
                                       const TrainerOptions& options) {
  auto trainer = Trainer::Create(startup, main, options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return nullptr;
  EXPECT_TRUE((*trainer)->Initialize().ok());
  return std::move(*trainer);
}

std::unique_ptr<DataParallelTrainer> ParallelTrainer(
    const NetDef& startup, const NetDef& main, const TrainerOptions& options,
    int replicas) {
  auto trainer = DataParallelTrainer::Create(startup, main, options, replicas);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return nullptr;
  EXPECT_TRUE((*trainer)->Initialize().ok());
  return std::move(*trainer);
}

// The rows `indices` of `data`.
Dataset Pick(const Dataset& data, const std::vector<int64_t>& indices) {
  absl::StatusOr<Dataset> picked = Gather(data, indices);
  EXPECT_TRUE(picked.ok()) << picked.status();
  return *picked;
}

class EquivalenceTest : public ::testing::TestWithParam<std::string> {};

// N replicas of B examples follow one replica of N * B within float
// rounding (the gradients' mean is summed in another order).
TEST_P(EquivalenceTest, ReplicasFollowOneReplicaOfTheWholeBatch) {
  const Dataset data = Clusters(96);
  const TrainerOptions options = Options(GetParam(), 24);
  std::unique_ptr<Trainer> one =
      SingleTrainer(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_NE(one, nullptr);
  ASSERT_TRUE(one->TrainUntil(data, 10, nullptr).ok());
  for (int replicas : {2, 3, 4}) {
    SCOPED_TRACE(replicas);
    std::unique_ptr<DataParallelTrainer> parallel =
        ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, replicas);
    ASSERT_NE(parallel, nullptr);
    EXPECT_EQ(parallel->replica_batch(), 24 / replicas);
    absl::Status trained = parallel->TrainUntil(data, 10, nullptr);
    ASSERT_TRUE(trained.ok()) << trained;
    EXPECT_EQ(*parallel->step(), 10);
    ExpectSameState(one->scope(), parallel->scope(), one->state_names(), 2e-5);
  }
}

// One replica runs exactly the ops of Trainer's net, in the same order.
TEST_P(EquivalenceTest, OneReplicaIsBitIdenticalToTrainer) {
  const Dataset data = Clusters(96);
  const TrainerOptions options = Options(GetParam(), 16);
  std::unique_ptr<Trainer> one =
      SingleTrainer(ToyStartupNet(), ToyMainNet(), options);
  std::unique_ptr<DataParallelTrainer> parallel =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, 1);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(parallel, nullptr);
  ASSERT_TRUE(one->TrainUntil(data, 8, nullptr).ok());
  ASSERT_TRUE(parallel->TrainUntil(data, 8, nullptr).ok());
  ExpectSameState(one->scope(), parallel->scope(), one->state_names(), 0);
}

// The sum is ordered by replica, whichever finishes first.
TEST_P(EquivalenceTest, RunsAreBitReproducible) {
  const Dataset data = Clusters(96);
  const TrainerOptions options = Options(GetParam(), 16);
  std::unique_ptr<DataParallelTrainer> first =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, 2);
  std::unique_ptr<DataParallelTrainer> second =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, 2);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(first->TrainUntil(data, 12, nullptr).ok());
  ASSERT_TRUE(second->TrainUntil(data, 12, nullptr).ok());
  ExpectSameState(first->scope(), second->scope(), first->state_names(), 0);
}

// Per-replica batch-norm statistics: with both replicas' shards holding the
// same examples, every replica's statistics are those of the whole batch,
// so 2 replicas of X follow one replica of X twice over, running
// statistics included.
TEST_P(EquivalenceTest, BatchNormWithPerReplicaStatistics) {
  NetDef startup = ToyStartupNet();
  NetDef main = ToyMainNet();
  AddBatchNorm(startup, main);
  const Dataset data = Clusters(64);
  const TrainerOptions options = Options(GetParam(), 16);
  std::unique_ptr<Trainer> one = SingleTrainer(startup, main, options);
  std::unique_ptr<DataParallelTrainer> parallel =
      ParallelTrainer(startup, main, options, 2);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(parallel, nullptr);
  for (int64_t step = 0; step < 6; ++step) {
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < 8; ++i) rows.push_back((step * 8 + i) % 64);
    std::vector<int64_t> twice = rows;
    twice.insert(twice.end(), rows.begin(), rows.end());
    const Dataset batch = Pick(data, twice);
    // One replica: a data set of one batch, taken whole at every step.
    ASSERT_TRUE(one->TrainUntil(batch, step + 1, nullptr).ok());
    absl::StatusOr<double> loss = parallel->TrainStep(batch);
    ASSERT_TRUE(loss.ok()) << loss.status();
  }
  ExpectSameState(one->scope(), parallel->scope(), one->state_names(), 2e-5);
  // The running statistics moved off their initial values.
  EXPECT_NE(Values(parallel->scope(), "bn.mean")[0], 0.0f);
  // Different shards: each replica normalises by its own statistics, which
  // differ from the whole batch's, so the path departs from one replica's.
  std::unique_ptr<Trainer> whole = SingleTrainer(startup, main, options);
  std::unique_ptr<DataParallelTrainer> split =
      ParallelTrainer(startup, main, options, 2);
  ASSERT_TRUE(whole->TrainUntil(data, 4, nullptr).ok());
  ASSERT_TRUE(split->TrainUntil(data, 4, nullptr).ok());
  EXPECT_NE(Values(whole->scope(), "w1"), Values(split->scope(), "w1"));
}

// Dropout: with the same shard on both replicas, one seed for both would
// make their gradients equal and the step that of one replica on the
// shard; per-replica seeds draw different masks, so it is not. Without
// dropout the same comparison is exact (g + g) / 2 = g.
TEST_P(EquivalenceTest, DropoutDrawsAMaskPerReplica) {
  const Dataset data = Clusters(64);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < 8; ++i) rows.push_back(i);
  std::vector<int64_t> twice = rows;
  twice.insert(twice.end(), rows.begin(), rows.end());
  const Dataset shard = Pick(data, rows);
  const Dataset batch = Pick(data, twice);
  for (bool dropout : {false, true}) {
    SCOPED_TRACE(dropout);
    NetDef main = ToyMainNet();
    if (dropout) AddDropout(main);
    std::unique_ptr<DataParallelTrainer> one =
        ParallelTrainer(ToyStartupNet(), main, Options(GetParam(), 8), 1);
    std::unique_ptr<DataParallelTrainer> two =
        ParallelTrainer(ToyStartupNet(), main, Options(GetParam(), 16), 2);
    ASSERT_NE(one, nullptr);
    ASSERT_NE(two, nullptr);
    ASSERT_TRUE(one->TrainStep(shard).ok());
    ASSERT_TRUE(two->TrainStep(batch).ok());
    if (dropout) {
      EXPECT_NE(Values(one->scope(), "w2"), Values(two->scope(), "w2"));
    } else {
      ExpectSameState(one->scope(), two->scope(), one->state_names(), 0);
    }
  }
  // And a dropout run is reproducible.
  NetDef main = ToyMainNet();
  AddDropout(main);
  std::unique_ptr<DataParallelTrainer> first =
      ParallelTrainer(ToyStartupNet(), main, Options(GetParam(), 16), 2);
  std::unique_ptr<DataParallelTrainer> second =
      ParallelTrainer(ToyStartupNet(), main, Options(GetParam(), 16), 2);
  ASSERT_TRUE(first->TrainUntil(data, 6, nullptr).ok());
  ASSERT_TRUE(second->TrainUntil(data, 6, nullptr).ok());
  ExpectSameState(first->scope(), second->scope(), first->state_names(), 0);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, EquivalenceTest,
                         ::testing::Values("sgd", "momentum", "adam"));

TEST(DataParallelTrainerTest, LearnsSeparableClusters) {
  const Dataset data = Clusters(240);
  TrainerOptions options = Options("adam", 16);
  options.epochs = 5;
  std::unique_ptr<DataParallelTrainer> trainer =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, 2);
  ASSERT_NE(trainer, nullptr);
  ASSERT_TRUE(trainer->Fit(data, data, nullptr, nullptr).ok());
  absl::StatusOr<EvalReport> after = trainer->Evaluate(data);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GT(after->accuracy, 0.95);
  EXPECT_EQ(trainer->times().steps, 5 * (240 / 16));
}

// Buckets of one gradient each are summed while the backward pass runs,
// in the order it finishes them (the last layer's first): the same bits as
// one bucket summed after it.
TEST(DataParallelTrainerTest, GradientBucketsDoNotChangeTheBits) {
  const Dataset data = Clusters(96);
  const TrainerOptions options = Options("momentum", 24);
  auto one_bucket = DataParallelTrainer::Create(
      ToyStartupNet(), ToyMainNet(), options, 2, nullptr, int64_t{1} << 30);
  auto small_buckets = DataParallelTrainer::Create(
      ToyStartupNet(), ToyMainNet(), options, 2, nullptr, /*bucket_bytes=*/1);
  ASSERT_TRUE(one_bucket.ok()) << one_bucket.status();
  ASSERT_TRUE(small_buckets.ok()) << small_buckets.status();
  for (auto* trainer : {&*one_bucket, &*small_buckets}) {
    ASSERT_TRUE((*trainer)->Initialize().ok());
    ASSERT_TRUE((*trainer)->TrainUntil(data, 8, nullptr).ok());
  }
  DataParallelTrainer& small = **small_buckets;
  EXPECT_EQ((*one_bucket)->reducer().buckets(), 1);
  const std::vector<VarGrad>& params = small.parameters();
  ASSERT_EQ(small.reducer().buckets(), static_cast<int>(params.size()));
  // The second fc's gradients come first in the buffer, the first fc's
  // last.
  const GradientReducer& reducer = small.reducer();
  int64_t w2_at = -1;
  int64_t w1_at = -1;
  for (size_t g = 0; g < params.size(); ++g) {
    const int64_t at =
        reducer.sums()[g].data<float>() - reducer.flat().data<float>();
    if (params[g].var == "w2") w2_at = at;
    if (params[g].var == "w1") w1_at = at;
  }
  ASSERT_GE(w2_at, 0);
  EXPECT_LT(w2_at, w1_at);
  ExpectSameState((*one_bucket)->scope(), small.scope(), small.state_names(),
                  0);
  const DataParallelTimes& times = small.times();
  EXPECT_EQ(times.steps, 8);
  EXPECT_GT(times.reduce_seconds, 0);
  EXPECT_LE(times.reduce_hidden_seconds, times.reduce_seconds);
  // Summed by the training thread instead of the replicas' threads: the
  // same bits.
  auto by_caller = DataParallelTrainer::Create(
      ToyStartupNet(), ToyMainNet(), options, 2, nullptr, /*bucket_bytes=*/1);
  ASSERT_TRUE(by_caller.ok()) << by_caller.status();
  (*by_caller)->set_sum_on_replica_threads(false);
  ASSERT_TRUE((*by_caller)->Initialize().ok());
  ASSERT_TRUE((*by_caller)->TrainUntil(data, 8, nullptr).ok());
  ExpectSameState(small.scope(), (*by_caller)->scope(), small.state_names(), 0);
  EXPECT_GT((*by_caller)->times().reduce_seconds, 0);
  auto zero = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                          options, 2, nullptr, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(),
              HasSubstr("gradient buckets of 0 bytes"));
}

TEST(DataParallelTrainerTest, CheckpointResumesWithAnotherReplicaCount) {
  const Dataset data = Clusters(120);
  TrainerOptions options = Options("adam", 12);
  options.checkpoint_dir = TempDir("dp_resume");
  std::unique_ptr<Trainer> straight =
      SingleTrainer(ToyStartupNet(), ToyMainNet(), options);
  ASSERT_TRUE(straight->TrainUntil(data, 14, nullptr).ok());
  {
    std::unique_ptr<DataParallelTrainer> two =
        ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, 2);
    ASSERT_TRUE(two->TrainUntil(data, 6, nullptr).ok());
    ASSERT_TRUE(two->SaveCheckpoint().ok());
    // One copy of the state: what a single trainer saves, nothing per
    // replica.
    EXPECT_EQ(two->state_names(), straight->state_names());
  }
  std::unique_ptr<DataParallelTrainer> three =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), options, 3);
  absl::StatusOr<bool> resumed = three->Resume();
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_TRUE(*resumed);
  EXPECT_EQ(*three->step(), 6);
  ASSERT_TRUE(three->TrainUntil(data, 14, nullptr).ok());
  ExpectSameState(straight->scope(), three->scope(), straight->state_names(),
                  2e-5);
}

TEST(DataParallelTrainerTest, AFailingReplicaStopsTheStepAndIsNamed) {
  Dataset data = Clusters(16);
  // Replica 1's shard (rows 8..15) holds a label the net has no class for.
  data.labels.data<int64_t>()[12] = 7;
  std::unique_ptr<DataParallelTrainer> trainer =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), Options("sgd", 16), 2);
  ASSERT_NE(trainer, nullptr);
  const std::vector<float> before = Values(trainer->scope(), "w1");
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<double> loss = trainer->TrainStep(data);
    ASSERT_FALSE(loss.ok());
    EXPECT_THAT(loss.status().message(), HasSubstr("replica 1: "));
  }
  // No update: the state is as it was.
  EXPECT_EQ(*trainer->step(), 0);
  EXPECT_EQ(Values(trainer->scope(), "w1"), before);
}

TEST(DataParallelTrainerTest, BadConfigurations) {
  auto uneven = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                            Options("sgd", 10), 3);
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.status().message(),
              HasSubstr("batch of 10 examples does not split evenly over 3"));
  auto none = DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(),
                                          Options("sgd", 10), 0);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("replicas must be >= 1"));
  TrainerOptions on_gpu = Options("sgd", 16);
  on_gpu.place = CUDAPlace(0);
  auto gpu =
      DataParallelTrainer::Create(ToyStartupNet(), ToyMainNet(), on_gpu, 2);
  ASSERT_FALSE(gpu.ok());
  EXPECT_THAT(gpu.status().message(),
              HasSubstr("runs its replicas on CPU threads; place cuda:0"));
  std::unique_ptr<DataParallelTrainer> trainer =
      ParallelTrainer(ToyStartupNet(), ToyMainNet(), Options("sgd", 16), 2);
  absl::StatusOr<double> loss = trainer->TrainStep(Clusters(8));
  ASSERT_FALSE(loss.ok());
  EXPECT_THAT(loss.status().message(),
              HasSubstr("a step takes a batch of 16 examples, got 8"));
}

}  // namespace
}  // namespace scopeflow
