// Budgeted runs: within the budget, bit-identical to unbudgeted runs, with
// the copies the plan lists, for inference and for a training step. The
// cases that exercise a device run on the test device (everywhere) and on
// CUDA device 0 (skipped where there is none).
#include "framework/memory/offload_run.h"

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "framework/backward.h"
#include "framework/executor.h"
#include "framework/memory/cuda_device_memory.h"
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

// On the host, as a budgeted run wants its parameters; on `place` for an
// unbudgeted run, which updates them there.
void Fill(Scope& scope, const std::string& name, const Tensor& value,
          const Place& place) {
  Tensor* tensor = *scope.Var(name)->GetMutable<Tensor>();
  absl::StatusOr<Tensor> placed = value.CopyTo(place);
  ASSERT_TRUE(placed.ok()) << placed.status();
  *tensor = *std::move(placed);
}

void Fill(Scope& scope, const std::string& name, Dims dims, unsigned seed,
          const Place& place) {
  Fill(scope, name, MakeTensor<float>(dims, Random(NumElements(dims), seed)),
       place);
}

std::vector<float> HostValues(const Tensor& tensor) {
  absl::StatusOr<Tensor> host = tensor.CopyTo(CPUPlace());
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? Values<float>(*host) : std::vector<float>();
}

struct Outcome {
  absl::Status status;
  std::vector<float> y;
  std::vector<float> w2;
  std::vector<float> w1;
};

Outcome RunMlp(ExecutorOptions options, const Place& place = CPUPlace()) {
  const bool budgeted = options.device_memory_budget > 0;
  const Place params_place = budgeted ? CPUPlace() : place;
  Executor executor(options);
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(Net(kMlp), 0, place);
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  Scope scope;
  Fill(scope, "w1", {64, 64}, 1, params_place);
  Fill(scope, "b1", {64}, 2, params_place);
  Fill(scope, "w2", {64, 64}, 3, params_place);
  Fill(scope, "lr", MakeTensor<float>({1}, {0.25f}), params_place);
  Outcome outcome;
  absl::StatusOr<std::vector<Tensor>> out = executor.Run(
      *prepared, scope, {{"x", MakeTensor<float>({8, 64}, Random(512, 4))}},
      {"y"});
  outcome.status = out.status();
  if (!out.ok()) return outcome;
  outcome.y = HostValues((*out)[0]);
  const Tensor& w2 = **scope.FindVar("w2")->GetMutable<Tensor>();
  // A budgeted run leaves the parameters on the host.
  if (budgeted) {
    EXPECT_TRUE(w2.place().is_cpu());
  }
  outcome.w2 = HostValues(w2);
  outcome.w1 = HostValues(**scope.FindVar("w1")->GetMutable<Tensor>());
  return outcome;
}

bool BitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

ExecutorOptions Budgeted(size_t budget, OffloadPolicy policy,
                         std::shared_ptr<DeviceMemory> device) {
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

// A device the budgeted cases run on: made with a capacity, or why there
// is none here.
struct DeviceKind {
  const char* name;
  absl::StatusOr<std::shared_ptr<DeviceMemory>> (*make)(size_t capacity);
};

absl::StatusOr<std::shared_ptr<DeviceMemory>> MakeTestDevice(size_t capacity) {
  return std::shared_ptr<DeviceMemory>(std::make_shared<TestDevice>(capacity));
}

absl::StatusOr<std::shared_ptr<DeviceMemory>> MakeCudaDevice(size_t capacity) {
  return MakeCudaDeviceMemory(/*device=*/0, capacity);
}

class BudgetedRunTest : public ::testing::TestWithParam<DeviceKind> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<DeviceMemory>> probe = GetParam().make(1);
    if (!probe.ok()) GTEST_SKIP() << probe.status().message();
    place_ = (*probe)->place();
  }
  std::shared_ptr<DeviceMemory> Device(size_t capacity) {
    absl::StatusOr<std::shared_ptr<DeviceMemory>> device =
        GetParam().make(capacity);
    EXPECT_TRUE(device.ok()) << device.status();
    return device.ok() ? *device : nullptr;
  }
  const Place& place() const { return place_; }

 private:
  Place place_ = CPUPlace();
};

INSTANTIATE_TEST_SUITE_P(
    Devices, BudgetedRunTest,
    ::testing::Values(DeviceKind{"test_device", &MakeTestDevice},
                      DeviceKind{"cuda", &MakeCudaDevice}),
    [](const ::testing::TestParamInfo<DeviceKind>& info) {
      return std::string(info.param.name);
    });

TEST_P(BudgetedRunTest, WithinTheBudgetBitIdenticalAndAsPlanned) {
  const Outcome reference = RunMlp(ExecutorOptions(), place());
  ASSERT_TRUE(reference.status.ok()) << reference.status;
  ASSERT_EQ(reference.y.size(), 512u);
  // All variables: 2 weights of 16 KiB, b1 and lr, x and 5 activations of
  // 2 KiB. The sgd needs the most: 32 KiB and 4 bytes.
  for (size_t budget : {33u << 10, 36u << 10, 40u << 10, 100u << 10}) {
    for (OffloadPolicy policy :
         {OffloadPolicy::kOnDemand, OffloadPolicy::kPlanned}) {
      SCOPED_TRACE(::testing::Message() << "budget " << budget << " "
                                        << OffloadPolicyName(policy));
      std::shared_ptr<DeviceMemory> device = Device(1 << 20);
      const Outcome outcome =
          RunMlp(Budgeted(budget, policy, device), place());
      ASSERT_TRUE(outcome.status.ok()) << outcome.status;
      EXPECT_TRUE(BitIdentical(outcome.y, reference.y));
      EXPECT_TRUE(BitIdentical(outcome.w2, reference.w2));
      EXPECT_TRUE(BitIdentical(outcome.w1, reference.w1));
      const AllocatorStats stats = device->stats();
      EXPECT_LE(stats.peak_bytes_in_use, static_cast<int64_t>(budget));
      EXPECT_GT(stats.peak_bytes_in_use, 0);
      EXPECT_EQ(stats.bytes_in_use, 0);
      // The test device records its copies; a CUDA device's are checked
      // through their effect (the values above).
      if (auto* test_device = dynamic_cast<TestDevice*>(device.get())) {
        EXPECT_EQ(test_device->copies(), PlannedCopies(budget, policy));
      }
    }
  }
}

// The device itself refuses more than the budget: a plan that kept to it
// is what makes the run succeed.
TEST_P(BudgetedRunTest, RunsOnADeviceNoLargerThanTheBudget) {
  const Outcome reference = RunMlp(ExecutorOptions(), place());
  const size_t budget = 33u << 10;
  const Outcome outcome = RunMlp(
      Budgeted(budget, OffloadPolicy::kPlanned, Device(budget)), place());
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

// A training step: three layers h_k = relu(h_{k-1} w_k) of 16 rows of 64
// floats (4 KiB activations, 16 KiB weights), loss = mean(h_3), its
// backward pass, and sgd on each weight.
NetDef TrainingNet() {
  NetDef net = Net(R"pb(
    blocks {
      vars { name: "x" dtype: DATA_TYPE_FLOAT32 shape: [ 16, 64 ] }
      vars { name: "w1" dtype: DATA_TYPE_FLOAT32 shape: [ 64, 64 ] persistable: true }
      vars { name: "w2" dtype: DATA_TYPE_FLOAT32 shape: [ 64, 64 ] persistable: true }
      vars { name: "w3" dtype: DATA_TYPE_FLOAT32 shape: [ 64, 64 ] persistable: true }
      vars { name: "lr" dtype: DATA_TYPE_FLOAT32 shape: [ 1 ] persistable: true }
      ops { type: "matmul" inputs { slot: "X" vars: "x" }
            inputs { slot: "Y" vars: "w1" } outputs { slot: "Out" vars: "p1" } }
      ops { type: "relu" inputs { slot: "X" vars: "p1" }
            outputs { slot: "Out" vars: "h1" } }
      ops { type: "matmul" inputs { slot: "X" vars: "h1" }
            inputs { slot: "Y" vars: "w2" } outputs { slot: "Out" vars: "p2" } }
      ops { type: "relu" inputs { slot: "X" vars: "p2" }
            outputs { slot: "Out" vars: "h2" } }
      ops { type: "matmul" inputs { slot: "X" vars: "h2" }
            inputs { slot: "Y" vars: "w3" } outputs { slot: "Out" vars: "p3" } }
      ops { type: "relu" inputs { slot: "X" vars: "p3" }
            outputs { slot: "Out" vars: "h3" } }
      ops { type: "mean" inputs { slot: "X" vars: "h3" }
            outputs { slot: "Out" vars: "loss" } }
    })pb");
  absl::StatusOr<std::vector<VarGrad>> grads = AppendBackward(net, "loss");
  EXPECT_TRUE(grads.ok()) << grads.status();
  if (!grads.ok()) return net;
  for (const VarGrad& grad : *grads) {
    OpDef* sgd = net.mutable_blocks(0)->add_ops();
    sgd->set_type("sgd");
    auto input = [&](const char* slot, const std::string& var) {
      OpSlot* in = sgd->add_inputs();
      in->set_slot(slot);
      in->add_vars(var);
    };
    input("Param", grad.var);
    input("Grad", grad.grad);
    input("LearningRate", "lr");
    OpSlot* out = sgd->add_outputs();
    out->set_slot("ParamOut");
    out->add_vars(grad.var);
  }
  return net;
}

struct TrainingOutcome {
  absl::Status status;
  std::vector<std::vector<float>> values;  // loss, w1, w2, w3
};

TrainingOutcome RunTrainingStep(ExecutorOptions options, const Place& place) {
  const Place params_place =
      options.device_memory_budget > 0 ? CPUPlace() : place;
  Executor executor(options);
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(TrainingNet(), 0, place);
  TrainingOutcome outcome;
  outcome.status = prepared.status();
  if (!prepared.ok()) return outcome;
  Scope scope;
  for (unsigned k = 1; k <= 3; ++k) {
    Fill(scope, "w" + std::to_string(k), {64, 64}, k, params_place);
  }
  Fill(scope, "lr", MakeTensor<float>({1}, {0.5f}), params_place);
  absl::StatusOr<std::vector<Tensor>> out = executor.Run(
      *prepared, scope, {{"x", MakeTensor<float>({16, 64}, Random(1024, 9))}},
      {"loss"});
  outcome.status = out.status();
  if (!out.ok()) return outcome;
  outcome.values.push_back(HostValues((*out)[0]));
  for (const char* w : {"w1", "w2", "w3"}) {
    outcome.values.push_back(
        HostValues(**scope.FindVar(w)->GetMutable<Tensor>()));
  }
  return outcome;
}

TEST_P(BudgetedRunTest, ATrainingStepOffloadsTheActivationsKeptForBackward) {
  const TrainingOutcome reference =
      RunTrainingStep(ExecutorOptions(), place());
  ASSERT_TRUE(reference.status.ok()) << reference.status;
  // The most any one op needs: on demand holds only each op's variables.
  absl::StatusOr<PreparedNet> prepared =
      Executor().Prepare(TrainingNet(), 0, place());
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  absl::StatusOr<OffloadPlan> unbounded =
      PlanOffload(*prepared, {"loss"}, kNoDeviceMemoryBudget,
                  OffloadPolicy::kOnDemand);
  ASSERT_TRUE(unbounded.ok()) << unbounded.status();
  const size_t need = unbounded->peak_bytes;
  absl::StatusOr<OffloadPlan> everything = PlanOffload(
      *prepared, {"loss"}, kNoDeviceMemoryBudget, OffloadPolicy::kPlanned);
  ASSERT_TRUE(everything.ok()) << everything.status();
  ASSERT_GT(everything->peak_bytes, need + need / 4);

  for (size_t budget : {need, need + need / 4}) {
    for (OffloadPolicy policy :
         {OffloadPolicy::kOnDemand, OffloadPolicy::kPlanned}) {
      SCOPED_TRACE(::testing::Message() << "budget " << budget << " "
                                        << OffloadPolicyName(policy));
      // An activation the forward pass wrote leaves the device and comes
      // back for the backward pass.
      absl::StatusOr<OffloadPlan> plan =
          PlanOffload(*prepared, {"loss"}, budget, policy);
      ASSERT_TRUE(plan.ok()) << plan.status();
      std::vector<bool> written_back(prepared->var_names().size(), false);
      bool activation_reloaded = false;
      for (const OffloadAction& action : plan->AllActions()) {
        if (!prepared->IsTemporary(action.var)) continue;
        if (action.kind == OffloadAction::kWriteBack) {
          written_back[action.var] = true;
        }
        if (action.kind == OffloadAction::kLoad && written_back[action.var]) {
          activation_reloaded = true;
        }
      }
      EXPECT_TRUE(activation_reloaded);

      std::shared_ptr<DeviceMemory> device = Device(budget);
      const TrainingOutcome outcome =
          RunTrainingStep(Budgeted(budget, policy, device), place());
      ASSERT_TRUE(outcome.status.ok()) << outcome.status;
      ASSERT_EQ(outcome.values.size(), reference.values.size());
      for (size_t i = 0; i < outcome.values.size(); ++i) {
        EXPECT_TRUE(BitIdentical(outcome.values[i], reference.values[i]))
            << "value " << i;
      }
      EXPECT_LE(device->stats().peak_bytes_in_use,
                static_cast<int64_t>(budget));
      EXPECT_EQ(device->stats().bytes_in_use, 0);
    }
  }
}

}  // namespace
}  // namespace scopeflow
