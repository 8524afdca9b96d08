// Trains examples/sequence/rnn.pbtxt (a tanh RNN run by the recurrent op)
// to count the ones in 10 random bits, as `scopeflow train` does, and
// checks the test accuracy it reaches.
#include <cstdint>
#include <random>
#include <vector>

#include "framework/net_io.h"
#include "framework/training/dataset.h"
#include "framework/training/trainer.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

// Like gen_bits.py: `rows` examples of 10 bits, labelled with their sum.
Dataset Bits(int64_t rows, uint32_t seed) {
  Dataset data;
  EXPECT_TRUE(data.features.Allocate(CPUPlace(), kFloat32, {rows, 10}).ok());
  EXPECT_TRUE(data.labels.Allocate(CPUPlace(), kInt64, {rows, 1}).ok());
  data.num_classes = 11;
  std::mt19937 rng(seed);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t ones = 0;
    for (int i = 0; i < 10; ++i) {
      const int bit = static_cast<int>(rng() & 1);
      data.features.data<float>()[r * 10 + i] = static_cast<float>(bit);
      ones += bit;
    }
    data.labels.data<int64_t>()[r] = ones;
  }
  return data;
}

TEST(SequenceExampleTest, TheRnnLearnsToCountBits) {
  absl::StatusOr<NetDef> startup =
      LoadNet("examples/sequence/rnn_startup.pbtxt");
  ASSERT_TRUE(startup.ok()) << startup.status();
  absl::StatusOr<NetDef> main = LoadNet("examples/sequence/rnn.pbtxt");
  ASSERT_TRUE(main.ok()) << main.status();
  TrainerOptions options;
  options.features_feed = "bits";
  options.batch_size = 32;
  options.epochs = 15;
  options.optimizer.type = "adam";
  options.optimizer.learning_rate = 0.01f;
  options.optimizer.lr_policy = "cosine";
  options.optimizer.total_steps = 3000 / 32 * options.epochs;
  const Dataset train = Bits(3000, 1);
  const Dataset test = Bits(500, 2);
  absl::StatusOr<std::unique_ptr<Trainer>> trainer =
      Trainer::Create(*startup, *main, options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  ASSERT_TRUE((*trainer)->Initialize().ok());
  ASSERT_TRUE((*trainer)
                  ->Fit(
                      train, test, [](const StepReport&) {},
                      [](const EvalReport& report) {
                        std::printf("epoch %lld: test accuracy %.2f%%\n",
                                    static_cast<long long>(report.epoch),
                                    100 * report.accuracy);
                      })
                  .ok());
  absl::StatusOr<EvalReport> report = (*trainer)->Evaluate(test);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GE(report->accuracy, 0.95);
}

}  // namespace
}  // namespace scopeflow
