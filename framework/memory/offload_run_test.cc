// Budgeted runs on the test device: within the budget, bit-identical to
// unbudgeted runs, with the copies the plan lists.
#include "framework/memory/offload_run.h"

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "framework/executor.h"
#include "framework/memory/test_device.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

NetDef Net(const std::string& blocks) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1 name: \"offload\" " + blocks);
  EXPECT_TRUE(net.ok()) << net.status();
  return *net;
}

// Two layers h = relu(x w1 + b1), y = reshape(h w2) of 64-float rows, and
// a step of sgd on w2 (w2 -= lr * w1, so a parameter changes on the device
// and must come back). Weights are 16 KiB each, activations 2 KiB.
constexpr char kMlp[] = R"pb(
  blocks {
    vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 8, 64 ] }
    vars { name: "w1" dtype: DATA_TYPE_FLOAT32 shape: [ 64, 64 ] persistable: true }
    vars { name: "b1" dtype: DATA_TYPE_FLOAT32 shape: [ 64 ] persistable: true }
    vars { name: "w2" dtype: DATA_TYPE_FLOAT32 shape: [ 64, 64 ] persistable: true }
    vars { name: "lr" dtype: DATA_TYPE_FLOAT32 shape: [ 1 ] persistable: true }
    ops {
      type: "matmul"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "w1" }
      outputs { slot: "Out" vars: "xw" }
    }
    ops {
      type: "add"
      inputs { slot: "X" vars: "xw" }
      inputs { slot: "Y" vars: "b1" }
      outputs { slot: "Out" vars: "pre" }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "pre" }
      outputs { slot: "Out" vars: "h" }
    }
    ops {
      type: "matmul"
      inputs { slot: "X" vars: "h" }
      inputs { slot: "Y" vars: "w2" }
      outputs { slot: "Out" vars: "hw" }
    }
    ops {
      type: "reshape"
      inputs { slot: "X" vars: "hw" }
      outputs { slot: "Out" vars: "y" }
      attrs { name: "shape" i64s { values: [ 512 ] } }
    }
    ops {
      type: "sgd"
      inputs { slot: "Param" vars: "w2" }
      inputs { slot: "Grad" vars: "w1" }
      inputs { slot: "LearningRate" vars: "lr" }
      outputs { slot: "ParamOut" vars: "w2" }
    }
  })pb";

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(random);
  return values;
}

void Fill(Scope& scope, const std::string& name, Dims dims, unsigned seed) {
  Tensor* tensor = *scope.Var(name)->GetMutable<Tensor>();
  *tensor = MakeTensor<float>(dims, Random(NumElements(dims), seed));
}

struct Outcome {
  absl::Status status;
  std::vector<float> y;
  std::vector<float> w2;
  std::vector<float> w1;
};

Outcome RunMlp(ExecutorOptions options) {
  Executor executor(options);
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(Net(kMlp), 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  Fill(scope, "w1", {64, 64}, 1);
  Fill(scope, "b1", {64}, 2);
  Fill(scope, "w2", {64, 64}, 3);
  *(*scope.Var("lr")->GetMutable<Tensor>()) = MakeTensor<float>({1}, {0.25f});
  Outcome outcome;
  absl::StatusOr<std::vector<Tensor>> out = executor.Run(
      *prepared, scope, {{"x", MakeTensor<float>({8, 64}, Random(512, 4))}},
      {"y"});
  outcome.status = out.status();
  if (!out.ok()) return outcome;
  outcome.y = Values<float>((*out)[0]);
  const Tensor& w2 = **scope.FindVar("w2")->GetMutable<Tensor>();
  EXPECT_TRUE(w2.place().is_cpu());
  outcome.w2 = Values<float>(w2);
  outcome.w1 = Values<float>(**scope.FindVar("w1")->GetMutable<Tensor>());
  return outcome;
}

bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

ExecutorOptions Budgeted(size_t budget, OffloadPolicy policy,
                         std::shared_ptr<TestDevice> device) {
  ExecutorOptions options;
  options.device_memory_budget = budget;
  options.offload_policy = policy;
  options.device_memory = std::move(device);
  return options;
}

// The copies a plan lists, as the test device records them.
std::vector<TestDevice::Copy> PlannedCopies(size_t budget,
                                            OffloadPolicy policy) {
  Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(Net(kMlp), 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<OffloadPlan> plan =
      PlanOffload(*prepared, {"y"}, budget, policy);
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<TestDevice::Copy> copies;
  if (!plan.ok()) return copies;
  for (const OffloadAction& action : plan->AllActions()) {
    if (action.copies()) {
      copies.push_back({action.kind == OffloadAction::kLoad, action.bytes});
    }
  }
  return copies;
}

TEST(OffloadRunTest, WithinTheBudgetBitIdenticalAndAsPlanned) {
  const Outcome reference = RunMlp(ExecutorOptions());
  ASSERT_TRUE(reference.status.ok()) << reference.status;
  ASSERT_EQ(reference.y.size(), 512u);
  // All variables: 2 weights of 16 KiB, b1 and lr, x and 5 activations of
  // 2 KiB. The sgd needs the most: 32 KiB and 4 bytes.
  for (size_t budget : {33u << 10, 36u << 10, 40u << 10, 100u << 10}) {
    for (OffloadPolicy policy :
         {OffloadPolicy::kOnDemand, OffloadPolicy::kPlanned}) {
      SCOPED_TRACE(::testing::Message() << "budget " << budget << " "
                                        << OffloadPolicyName(policy));
      auto device = std::make_shared<TestDevice>(1 << 20);
      const Outcome outcome = RunMlp(Budgeted(budget, policy, device));
      ASSERT_TRUE(outcome.status.ok()) << outcome.status;
      EXPECT_TRUE(BitIdentical(outcome.y, reference.y));
      EXPECT_TRUE(BitIdentical(outcome.w2, reference.w2));
      EXPECT_TRUE(BitIdentical(outcome.w1, reference.w1));
      const AllocatorStats stats = device->stats();
      EXPECT_LE(stats.peak_bytes_in_use, static_cast<int64_t>(budget));
      EXPECT_GT(stats.peak_bytes_in_use, 0);
      EXPECT_EQ(stats.bytes_in_use, 0);
      EXPECT_EQ(device->copies(), PlannedCopies(budget, policy));
    }
  }
}

// The device itself refuses more than the budget: a plan that kept to it
// is what makes the run succeed.
TEST(OffloadRunTest, RunsOnADeviceNoLargerThanTheBudget) {
  const Outcome reference = RunMlp(ExecutorOptions());
  const size_t budget = 33u << 10;
  auto device = std::make_shared<TestDevice>(budget);
  const Outcome outcome =
      RunMlp(Budgeted(budget, OffloadPolicy::kPlanned, device));
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(BitIdentical(outcome.y, reference.y));
}

// Planned moves fewer bytes than on demand once the weights fit.
TEST(OffloadRunTest, PlannedMovesLessThanOnDemand) {
  const std::vector<TestDevice::Copy> on_demand =
      PlannedCopies(100u << 10, OffloadPolicy::kOnDemand);
  const std::vector<TestDevice::Copy> planned =
      PlannedCopies(100u << 10, OffloadPolicy::kPlanned);
  size_t on_demand_bytes = 0;
  size_t planned_bytes = 0;
  for (const auto& copy : on_demand) on_demand_bytes += copy.bytes;
  for (const auto& copy : planned) planned_bytes += copy.bytes;
  // Planned: each weight, b1, lr and x in once, w2 and y out once.
  EXPECT_EQ(planned_bytes, (16 + 16 + 2 + 16 + 2) * 1024u + 256 + 4);
  EXPECT_GT(on_demand_bytes, 2 * planned_bytes);
}

TEST(OffloadRunTest, ABudgetBelowAnOpsNeedFailsNamingTheOp) {
  auto device = std::make_shared<TestDevice>(1 << 20);
  const Outcome outcome =
      RunMlp(Budgeted(10000, OffloadPolicy::kPlanned, device));
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(outcome.status.message(),
              HasSubstr("op 0 (matmul, run as fc) needs 20736 bytes of "
                        "device memory"));
  EXPECT_THAT(outcome.status.message(),
              HasSubstr("more than the budget of 10000 bytes"));
}

TEST(OffloadRunTest, ABudgetNeedsADevice) {
  const Outcome outcome =
      RunMlp(Budgeted(1 << 20, OffloadPolicy::kPlanned, nullptr));
  EXPECT_THAT(outcome.status.message(),
              HasSubstr("a device memory budget needs the device's memory"));
}

}  // namespace
}  // namespace scopeflow
