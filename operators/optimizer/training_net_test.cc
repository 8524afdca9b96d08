// The ops as the training library uses them: AppendTrainingOps
// (framework/training/optimizer.h) writes sgd, momentum, adam,
// clip_by_global_norm, lr_schedule and increment ops and the startup ops
// of their state into a least-squares regression, initialised by
// xavier_uniform; the nets must prepare, and training must fit the data.
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "framework/training/optimizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

NetDef Parse(const std::string& text) {
  absl::StatusOr<NetDef> net = ParseNetText(text);
  EXPECT_TRUE(net.ok()) << net.status();
  return net.ok() ? *net : NetDef();
}

// loss = (x w - t)^2 per row, w [2, 1]; its gradient is that of the sum.
NetDef MainNet() {
  return Parse(
      "format_version: 1 name: \"regression\" blocks { "
      "vars { name: \"x\" dtype: DATA_TYPE_FLOAT32 shape: [4, 2] } "
      "vars { name: \"t\" dtype: DATA_TYPE_FLOAT32 shape: [4, 1] } "
      "vars { name: \"w\" dtype: DATA_TYPE_FLOAT32 shape: [2, 1] "
      "persistable: true } "
      "ops { type: \"matmul\" inputs { slot: \"X\" vars: \"x\" } "
      "inputs { slot: \"Y\" vars: \"w\" } outputs { slot: \"Out\" vars: "
      "\"y\" } } "
      "ops { type: \"sub\" inputs { slot: \"X\" vars: \"y\" } "
      "inputs { slot: \"Y\" vars: \"t\" } outputs { slot: \"Out\" vars: "
      "\"d\" } } "
      "ops { type: \"mul\" inputs { slot: \"X\" vars: \"d\" } "
      "inputs { slot: \"Y\" vars: \"d\" } outputs { slot: \"Out\" vars: "
      "\"loss\" } } }");
}

NetDef StartupNet() {
  return Parse(
      "format_version: 1 name: \"regression_startup\" blocks { "
      "vars { name: \"w\" dtype: DATA_TYPE_FLOAT32 shape: [2, 1] "
      "persistable: true } "
      "ops { type: \"xavier_uniform\" outputs { slot: \"Out\" vars: \"w\" } "
      "attrs { name: \"shape\" i64s { values: [2, 1] } } "
      "attrs { name: \"seed\" i: 3 } } }");
}

struct Case {
  std::string name;
  OptimizerConfig config;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  OptimizerConfig sgd;
  sgd.type = "sgd";
  sgd.learning_rate = 0.05f;
  cases.push_back({"sgd", sgd});

  OptimizerConfig momentum = sgd;
  momentum.type = "momentum";
  momentum.learning_rate = 0.02f;
  momentum.nesterov = true;
  momentum.clip_norm = 1;
  cases.push_back({"nesterov momentum, clipped", momentum});

  OptimizerConfig adam;
  adam.type = "adam";
  adam.learning_rate = 0.05f;
  adam.weight_decay = 1e-4f;
  adam.lr_policy = "cosine";
  adam.warmup_steps = 10;
  adam.total_steps = 400;
  adam.min_lr = 0.005f;
  cases.push_back({"adamw, warm-up and cosine", adam});
  return cases;
}

TEST(TrainingNetTest, EachOptimizerFitsALeastSquaresProblem) {
  // t = x [1.5, -0.5]^T exactly.
  const Tensor x = MakeTensor<float>({4, 2}, {1, 0, 0, 1, 1, 1, 2, -1});
  const Tensor t = MakeTensor<float>({4, 1}, {1.5f, -0.5f, 1, 3.5f});
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    NetDef main = MainNet();
    NetDef startup = StartupNet();
    auto grads = AppendTrainingOps(main, startup, "loss", c.config);
    ASSERT_TRUE(grads.ok()) << grads.status();
    ASSERT_EQ(grads->size(), 1u);

    Executor executor;
    auto init = executor.Prepare(startup, 0, CPUPlace());
    ASSERT_TRUE(init.ok()) << init.status();
    auto train = executor.Prepare(main, 0, CPUPlace());
    ASSERT_TRUE(train.ok()) << train.status();
    Scope scope;
    ASSERT_TRUE(executor.Run(*init, scope, {}, {}).ok());

    auto first = executor.Run(*train, scope, {{"x", x}, {"t", t}}, {"loss"});
    ASSERT_TRUE(first.ok()) << first.status();
    float first_loss = 0;
    for (float l : Values<float>((*first)[0])) first_loss += l;
    for (int step = 1; step < 400; ++step) {
      ASSERT_TRUE(executor.Run(*train, scope, {{"x", x}, {"t", t}}, {}).ok());
    }
    auto last = executor.Run(*train, scope, {{"x", x}, {"t", t}}, {"loss"});
    ASSERT_TRUE(last.ok()) << last.status();
    float last_loss = 0;
    for (float l : Values<float>((*last)[0])) last_loss += l;

    EXPECT_GT(first_loss, 1);
    EXPECT_LT(last_loss, 1e-2f) << "from " << first_loss;
    EXPECT_THAT(Values<int64_t>(**scope.FindVar(kStepVar)->Get<Tensor>()),
                ElementsAre(401));
  }
}

}  // namespace
}  // namespace scopeflow
