// sgd, momentum and adam run as a training net runs them: parameters and
// optimizer state are persistable variables of one Scope, updated in place
// by several runs of the same prepared net, and compared after each run
// with steps computed by hand (adam's with PyTorch's AdamW formulas).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// A persistable float32 variable of no declared shape (the scope's tensor
// gives it), as the training library declares optimizer state.
std::string State(const std::string& name,
                  const std::string& dtype = "DATA_TYPE_FLOAT32") {
  return absl::StrCat("vars { name: \"", name, "\" dtype: ", dtype,
                      " persistable: true } ");
}

// A non-persistable input of the net, fed at each run.
std::string Input(const std::string& name, const std::string& shape,
                  const std::string& dtype = "DATA_TYPE_FLOAT32") {
  return absl::StrCat("vars { name: \"", name, "\" dtype: ", dtype,
                      " shape: ", shape, " } ");
}

// One block of `vars` and `ops`, prepared for the CPU, run repeatedly
// against `scope`.
class Trainer {
 public:
  explicit Trainer(const std::string& block) {
    absl::StatusOr<NetDef> net = ParseNetText(absl::StrCat(
        "format_version: 1 name: \"train\" blocks { ", block, "}"));
    EXPECT_TRUE(net.ok()) << net.status();
    if (!net.ok()) return;
    absl::StatusOr<PreparedNet> prepared =
        executor_.Prepare(*net, 0, CPUPlace());
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    if (prepared.ok()) prepared_ = *std::move(prepared);
  }

  template <typename T>
  void Set(const std::string& name, Dims dims, const std::vector<T>& values) {
    *scope_.Var(name)->GetMutable<Tensor>().value() =
        MakeTensor<T>(dims, values);
  }

  template <typename T = float>
  std::vector<T> Get(const std::string& name) {
    const Variable* var = scope_.FindVar(name);
    EXPECT_NE(var, nullptr) << name;
    if (var == nullptr) return {};
    return Values<T>(**var->Get<Tensor>());
  }

  absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<Feed>& feeds,
      const std::vector<std::string>& fetches = {}) {
    return executor_.Run(prepared_, scope_, feeds, fetches);
  }

 private:
  Executor executor_;
  PreparedNet prepared_;
  Scope scope_;
};

Feed FloatFeed(const std::string& name, std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return {name, MakeTensor<float>({n}, values)};
}

constexpr char kSgdOp[] =
    "ops { type: \"sgd\" inputs { slot: \"Param\" vars: \"w\" } "
    "inputs { slot: \"Grad\" vars: \"g\" } "
    "inputs { slot: \"LearningRate\" vars: \"lr\" } "
    "outputs { slot: \"ParamOut\" vars: \"w\" } }";

TEST(SgdTest, UpdatesThePersistableParameterInPlaceAcrossRuns) {
  Trainer trainer(State("w") + State("lr") + Input("g", "[2]") + kSgdOp);
  trainer.Set<float>("w", {2}, {1, 2});
  trainer.Set<float>("lr", {1}, {0.1f});

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {0.5f, -1})}).ok());
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.95f, 2.1f}));
  ASSERT_TRUE(trainer.Run({FloatFeed("g", {1, 1})}).ok());
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.85f, 2.0f}));
  // The learning rate is read at each run.
  trainer.Set<float>("lr", {1}, {0.5f});
  ASSERT_TRUE(trainer.Run({FloatFeed("g", {0.1f, 0.2f})}).ok());
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.8f, 1.9f}));
}

TEST(SgdTest, AFetchedParameterKeepsItsValueWhenTheNextRunUpdatesIt) {
  Trainer trainer(State("w") + State("lr") + Input("g", "[2]") + kSgdOp);
  trainer.Set<float>("w", {2}, {1, 2});
  trainer.Set<float>("lr", {1}, {1});
  auto first = trainer.Run({FloatFeed("g", {1, 1})}, {"w"});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(trainer.Run({FloatFeed("g", {1, 1})}).ok());
  EXPECT_THAT(Values<float>((*first)[0]), ElementsAre(0, 1));
  EXPECT_THAT(trainer.Get("w"), ElementsAre(-1, 0));
}

TEST(SgdTest, ParamOutMayBeANewVariable) {
  auto out = RunOp(
      "type: \"sgd\" inputs { slot: \"Param\" vars: \"w\" } "
      "inputs { slot: \"Grad\" vars: \"g\" } "
      "inputs { slot: \"LearningRate\" vars: \"lr\" } "
      "outputs { slot: \"ParamOut\" vars: \"w2\" }",
      {{"w", MakeTensor<float>({2, 2}, {1, 2, 3, 4})},
       {"g", MakeTensor<float>({2, 2}, {1, -1, 2, -2})},
       {"lr", MakeTensor<float>({1}, {0.5f})}},
      {"w", "w2"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT((*out)[1].dims(), ElementsAre(2, 2));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(0.5f, 2.5f, 2, 5));
}

TEST(SgdTest, Float64ParameterWithAFloat32LearningRate) {
  Trainer trainer(State("w", "DATA_TYPE_FLOAT64") + State("lr") +
                  Input("g", "[3]", "DATA_TYPE_FLOAT64") + kSgdOp);
  trainer.Set<double>("w", {3}, {1, 2, 3});
  trainer.Set<float>("lr", {1}, {0.25f});
  ASSERT_TRUE(trainer.Run({{"g", MakeTensor<double>({3}, {4, -4, 0.4})}}).ok());
  EXPECT_THAT(trainer.Get<double>("w"),
              Pointwise(DoubleNear(1e-12), {0.0, 3.0, 2.9}));
}

TEST(SgdTest, ErrorsNameTheOpAndTheVariable) {
  const std::string op =
      "type: \"sgd\" inputs { slot: \"Param\" vars: \"w\" } "
      "inputs { slot: \"Grad\" vars: \"g\" } "
      "inputs { slot: \"LearningRate\" vars: \"lr\" } "
      "outputs { slot: \"ParamOut\" vars: \"w\" }";
  const Tensor lr = MakeTensor<float>({1}, {0.1f});
  const Tensor w = MakeTensor<float>({2}, {1, 2});
  EXPECT_THAT(
      PrepareOp(
          op, {{"w", w}, {"g", MakeTensor<float>({3}, {1, 2, 3})}, {"lr", lr}})
          .message(),
      HasSubstr("op 0 (sgd): input \"Grad\" (variable \"g\", shape [3]) must "
                "have the shape of input \"Param\" (variable \"w\", shape "
                "[2])"));
  EXPECT_THAT(
      PrepareOp(op,
                {{"w", w}, {"g", MakeTensor<double>({2}, {1, 2})}, {"lr", lr}})
          .message(),
      HasSubstr("op 0 (sgd): inputs \"Param\" (variable \"w\", float32) and "
                "\"Grad\" (variable \"g\", float64) must have one dtype"));
  EXPECT_THAT(
      PrepareOp(
          op,
          {{"w", w}, {"g", w}, {"lr", MakeTensor<float>({2}, {0.1f, 0.2f})}})
          .message(),
      HasSubstr("op 0 (sgd): input \"LearningRate\" (variable \"lr\", shape "
                "[2]) must hold exactly one element"));
  EXPECT_THAT(
      PrepareOp(op, {{"w", w}, {"g", w}, {"lr", MakeTensor<int64_t>({1}, {1})}})
          .message(),
      HasSubstr("op 0 (sgd): input \"LearningRate\" (variable \"lr\") has "
                "dtype int64: expected float32 or float64"));
  EXPECT_THAT(
      PrepareOp(op, {{"w", MakeTensor<int32_t>({2}, {1, 2})},
                     {"g", MakeTensor<int32_t>({2}, {1, 2})},
                     {"lr", lr}})
          .message(),
      HasSubstr("op 0 (sgd): input \"Param\" (variable \"w\") has dtype "
                "int32: expected float32 or float64"));
}

TEST(SgdTest, ShapesUnknownAtPrepareAreCheckedWhenTheNetRuns) {
  // The parameter's shape comes from the scope, so Prepare cannot compare.
  Trainer trainer(State("w") + State("lr") + Input("g", "[-1]") + kSgdOp);
  trainer.Set<float>("w", {2}, {1, 2});
  trainer.Set<float>("lr", {1}, {0.1f});
  EXPECT_THAT(trainer.Run({FloatFeed("g", {1, 2, 3})}).status().message(),
              HasSubstr("op 0 (sgd): input \"Grad\" (variable \"g\", shape "
                        "[3]) must have the shape of input \"Param\" "
                        "(variable \"w\", shape [2])"));
  EXPECT_THAT(trainer.Get("w"), ElementsAre(1, 2));
  trainer.Set<float>("lr", {2}, {0.1f, 0.1f});
  EXPECT_THAT(trainer.Run({FloatFeed("g", {1, 2})}).status().message(),
              HasSubstr("op 0 (sgd): input \"LearningRate\" (variable "
                        "\"lr\", shape [2]) must hold exactly one element"));
}

std::string MomentumOp(bool nesterov) {
  return absl::StrCat(
      "ops { type: \"momentum\" inputs { slot: \"Param\" vars: \"w\" } "
      "inputs { slot: \"Grad\" vars: \"g\" } "
      "inputs { slot: \"Velocity\" vars: \"v\" } "
      "inputs { slot: \"LearningRate\" vars: \"lr\" } "
      "outputs { slot: \"ParamOut\" vars: \"w\" } "
      "outputs { slot: \"VelocityOut\" vars: \"v\" } "
      "attrs { name: \"mu\" f: 0.9 } "
      "attrs { name: \"use_nesterov\" b: ",
      nesterov ? "true" : "false", " } }");
}

// velocity = 0.9 velocity + grad; w -= 0.1 velocity.
TEST(MomentumTest, ThreeSteps) {
  Trainer trainer(State("w") + State("v") + State("lr") + Input("g", "[2]") +
                  MomentumOp(false));
  trainer.Set<float>("w", {2}, {1, -1});
  trainer.Set<float>("v", {2}, {0, 0});
  trainer.Set<float>("lr", {1}, {0.1f});

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {1, 2})}).ok());
  EXPECT_THAT(trainer.Get("v"), Pointwise(FloatNear(1e-6), {1.0f, 2.0f}));
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.9f, -1.2f}));

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {0.5f, -1})}).ok());
  EXPECT_THAT(trainer.Get("v"), Pointwise(FloatNear(1e-6), {1.4f, 0.8f}));
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.76f, -1.28f}));

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {0, 0})}).ok());
  EXPECT_THAT(trainer.Get("v"), Pointwise(FloatNear(1e-6), {1.26f, 0.72f}));
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.634f, -1.352f}));
}

// velocity as above; w -= 0.1 (grad + 0.9 velocity).
TEST(MomentumTest, NesterovThreeSteps) {
  Trainer trainer(State("w") + State("v") + State("lr") + Input("g", "[2]") +
                  MomentumOp(true));
  trainer.Set<float>("w", {2}, {1, -1});
  trainer.Set<float>("v", {2}, {0, 0});
  trainer.Set<float>("lr", {1}, {0.1f});

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {1, 2})}).ok());
  EXPECT_THAT(trainer.Get("v"), Pointwise(FloatNear(1e-6), {1.0f, 2.0f}));
  // 1 - 0.1 (1 + 0.9), -1 - 0.1 (2 + 1.8).
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.81f, -1.38f}));

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {0.5f, -1})}).ok());
  EXPECT_THAT(trainer.Get("v"), Pointwise(FloatNear(1e-6), {1.4f, 0.8f}));
  // 0.81 - 0.1 (0.5 + 1.26), -1.38 - 0.1 (-1 + 0.72).
  EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(1e-6), {0.634f, -1.352f}));

  ASSERT_TRUE(trainer.Run({FloatFeed("g", {1, 0})}).ok());
  // v = [1.26 + 1, 0.72]; w -= 0.1 ([1, 0] + 0.9 v).
  EXPECT_THAT(trainer.Get("v"), Pointwise(FloatNear(1e-6), {2.26f, 0.72f}));
  EXPECT_THAT(trainer.Get("w"),
              Pointwise(FloatNear(1e-6), {0.634f - 0.1f * (1 + 0.9f * 2.26f),
                                          -1.352f - 0.1f * 0.9f * 0.72f}));
}

TEST(MomentumTest, VelocityMustMatchTheParameter) {
  const std::string op =
      "type: \"momentum\" inputs { slot: \"Param\" vars: \"w\" } "
      "inputs { slot: \"Grad\" vars: \"g\" } "
      "inputs { slot: \"Velocity\" vars: \"v\" } "
      "inputs { slot: \"LearningRate\" vars: \"lr\" } "
      "outputs { slot: \"ParamOut\" vars: \"w\" } "
      "outputs { slot: \"VelocityOut\" vars: \"v\" }";
  const Tensor w = MakeTensor<float>({2}, {1, 2});
  const Tensor lr = MakeTensor<float>({1}, {0.1f});
  EXPECT_THAT(PrepareOp(op, {{"w", w},
                             {"g", w},
                             {"v", MakeTensor<float>({1, 2}, {0, 0})},
                             {"lr", lr}})
                  .message(),
              HasSubstr("op 0 (momentum): input \"Velocity\" (variable \"v\", "
                        "shape [1, 2]) must have the shape of input \"Param\" "
                        "(variable \"w\", shape [2])"));
  EXPECT_THAT(PrepareOp(op, {{"w", w},
                             {"g", w},
                             {"v", MakeTensor<double>({2}, {0, 0})},
                             {"lr", lr}})
                  .message(),
              HasSubstr("op 0 (momentum): inputs \"Param\" (variable \"w\", "
                        "float32) and \"Velocity\" (variable \"v\", float64) "
                        "must have one dtype"));
  EXPECT_THAT(
      PrepareOp(op + " attrs { name: \"mu\" f: -0.5 }",
                {{"w", w}, {"g", w}, {"v", w}, {"lr", lr}})
          .message(),
      HasSubstr("op 0 (momentum): attribute \"mu\" must be non-negative"));
}

std::string AdamOp(float weight_decay) {
  std::string op =
      "ops { type: \"adam\" inputs { slot: \"Param\" vars: \"w\" } "
      "inputs { slot: \"Grad\" vars: \"g\" } "
      "inputs { slot: \"LearningRate\" vars: \"lr\" } ";
  std::string outputs = "outputs { slot: \"ParamOut\" vars: \"w\" } ";
  for (const char* slot : {"Moment1", "Moment2", "Beta1Pow", "Beta2Pow"}) {
    absl::StrAppend(&op, "inputs { slot: \"", slot, "\" vars: \"", slot,
                    "\" } ");
    absl::StrAppend(&outputs, "outputs { slot: \"", slot, "Out\" vars: \"",
                    slot, "\" } ");
  }
  return absl::StrCat(op, outputs,
                      "attrs { name: \"beta1\" f: 0.9 } "
                      "attrs { name: \"beta2\" f: 0.999 } "
                      "attrs { name: \"epsilon\" f: 1e-8 } "
                      "attrs { name: \"weight_decay\" f: ",
                      weight_decay, " } }");
}

std::string AdamState() {
  return State("w") + State("lr") + State("Moment1") + State("Moment2") +
         State("Beta1Pow") + State("Beta2Pow") + Input("g", "[3]");
}

// The state a startup net gives adam: zero moments, beta^1 in the powers.
void StartAdam(Trainer& trainer) {
  trainer.Set<float>("w", {3}, {1, -2, 0.5f});
  trainer.Set<float>("lr", {1}, {0.1f});
  trainer.Set<float>("Moment1", {3}, {0, 0, 0});
  trainer.Set<float>("Moment2", {3}, {0, 0, 0});
  trainer.Set<float>("Beta1Pow", {1}, {0.9f});
  trainer.Set<float>("Beta2Pow", {1}, {0.999f});
}

const std::vector<std::vector<float>> kAdamGrads = {
    {0.1f, -0.2f, 0}, {0.3f, 0.1f, -0.4f}, {-0.2f, 0.05f, 0.1f}};

// The moments are the same with and without weight decay.
void ExpectAdamMoments(Trainer& trainer, int step) {
  const std::vector<std::vector<float>> m = {{0.01f, -0.02f, 0},
                                             {0.039f, -0.008f, -0.04f},
                                             {0.0151f, -0.0022f, -0.026f}};
  const std::vector<std::vector<float>> v = {
      {1e-5f, 4e-5f, 0},
      {9.999e-5f, 4.996e-5f, 0.00016f},
      {0.00013989001f, 5.241004e-05f, 0.00016984f}};
  EXPECT_THAT(trainer.Get("Moment1"), Pointwise(FloatNear(1e-7), m[step]))
      << "step " << step;
  // 1e-8: float32's 1 - 0.999f is 1e-3 to within 1.3e-5 relative.
  EXPECT_THAT(trainer.Get("Moment2"), Pointwise(FloatNear(1e-8), v[step]))
      << "step " << step;
}

// Expected values from the AdamW algorithm of PyTorch's documentation,
// in double precision, lr 0.1, betas (0.9, 0.999), eps 1e-8. The first
// step moves each parameter by lr * sign(grad) (m_hat = g, v_hat = g^2),
// and not at all where the gradient is 0.
TEST(AdamTest, ThreeStepsWithBiasCorrection) {
  Trainer trainer(AdamState() + AdamOp(0));
  StartAdam(trainer);
  const std::vector<std::vector<float>> w = {
      {0.9f, -1.9f, 0.5f},
      {0.808221902f, -1.8733663f, 0.57441368f},
      {0.782431523f, -1.86722742f, 0.614715763f}};
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(trainer.Run({FloatFeed("g", kAdamGrads[step])}).ok());
    EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(2e-6), w[step]))
        << "step " << step;
    ExpectAdamMoments(trainer, step);
  }
  EXPECT_THAT(trainer.Get("Beta1Pow"), ElementsAre(FloatNear(0.6561f, 1e-6)));
  EXPECT_THAT(trainer.Get("Beta2Pow"),
              ElementsAre(FloatNear(0.996005996f, 1e-6)));
}

// Decoupled decay: w *= 1 - lr * 0.1 before each Adam step, so the first
// step gives 1 * 0.99 - 0.1 = 0.89.
TEST(AdamTest, DecoupledWeightDecay) {
  Trainer trainer(AdamState() + AdamOp(0.1f));
  StartAdam(trainer);
  const std::vector<std::vector<float>> w = {
      {0.89f, -1.88f, 0.495f},
      {0.789321902f, -1.8345663f, 0.56446368f},
      {0.755638304f, -1.81008175f, 0.599121126f}};
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(trainer.Run({FloatFeed("g", kAdamGrads[step])}).ok());
    EXPECT_THAT(trainer.Get("w"), Pointwise(FloatNear(2e-6), w[step]))
        << "step " << step;
    ExpectAdamMoments(trainer, step);
  }
}

TEST(AdamTest, Float64) {
  Trainer trainer(State("w", "DATA_TYPE_FLOAT64") + State("lr") +
                  State("Moment1", "DATA_TYPE_FLOAT64") +
                  State("Moment2", "DATA_TYPE_FLOAT64") + State("Beta1Pow") +
                  State("Beta2Pow") + Input("g", "[3]", "DATA_TYPE_FLOAT64") +
                  AdamOp(0));
  trainer.Set<double>("w", {3}, {1, -2, 0.5});
  trainer.Set<float>("lr", {1}, {0.1f});
  trainer.Set<double>("Moment1", {3}, {0, 0, 0});
  trainer.Set<double>("Moment2", {3}, {0, 0, 0});
  trainer.Set<float>("Beta1Pow", {1}, {0.9f});
  trainer.Set<float>("Beta2Pow", {1}, {0.999f});
  for (const auto& grad : kAdamGrads) {
    std::vector<double> g(grad.begin(), grad.end());
    ASSERT_TRUE(trainer.Run({{"g", MakeTensor<double>({3}, g)}}).ok());
  }
  // The float32 learning rate, betas and gradients limit the precision.
  EXPECT_THAT(
      trainer.Get<double>("w"),
      Pointwise(DoubleNear(2e-6), {0.782431523, -1.86722742, 0.614715763}));
}

TEST(AdamTest, ErrorsNameTheOpAndTheVariable) {
  std::string op = AdamOp(0);
  op = op.substr(6, op.size() - 8);  // The OpDef inside "ops { ... }".
  const Tensor w = MakeTensor<float>({3}, {1, 2, 3});
  const Tensor one = MakeTensor<float>({1}, {0.9f});
  std::vector<Feed> feeds = {
      {"w", w},       {"g", w},          {"lr", one},      {"Moment1", w},
      {"Moment2", w}, {"Beta1Pow", one}, {"Beta2Pow", one}};
  ASSERT_TRUE(PrepareOp(op, feeds).ok()) << PrepareOp(op, feeds);

  std::vector<Feed> bad = feeds;
  bad[4].tensor = MakeTensor<float>({2}, {0, 0});
  EXPECT_THAT(PrepareOp(op, bad).message(),
              HasSubstr("op 0 (adam): input \"Moment2\" (variable "
                        "\"Moment2\", shape [2]) must have the shape of input "
                        "\"Param\" (variable \"w\", shape [3])"));
  bad = feeds;
  bad[5].tensor = MakeTensor<float>({2}, {0.9f, 0.9f});
  EXPECT_THAT(PrepareOp(op, bad).message(),
              HasSubstr("op 0 (adam): input \"Beta1Pow\" (variable "
                        "\"Beta1Pow\", shape [2]) must hold exactly one "
                        "element"));
  bad = feeds;
  bad[6].tensor = MakeTensor<int64_t>({1}, {1});
  EXPECT_THAT(PrepareOp(op, bad).message(),
              HasSubstr("op 0 (adam): input \"Beta2Pow\" (variable "
                        "\"Beta2Pow\") has dtype int64: expected float32 or "
                        "float64"));

  const std::string beta_one =
      absl::StrCat(op, " attrs { name: \"beta1\" f: 1 }");
  EXPECT_THAT(
      PrepareOp(beta_one, feeds).message(),
      HasSubstr("op 0 (adam): attribute \"beta1\" must be in [0, 1), got 1"));

  // beta1^t = 1 would divide by zero: refused when the kernel reads it.
  bad = feeds;
  bad[5].tensor = MakeTensor<float>({1}, {1});
  EXPECT_THAT(RunOp(op, bad, {"w"}).status().message(),
              HasSubstr("op 0 (adam): input \"Beta1Pow\" (variable "
                        "\"Beta1Pow\") holds 1: expected beta^t in [0, 1)"));
}

}  // namespace
}  // namespace scopeflow
