// The executor on a CUDA place: example nets and training steps against
// the CPU, ops without a CUDA kernel, parameters left on the host,
// concurrent runs, and the caching allocator's behaviour across runs.
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/cuda_test_util.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_test_util.h"
#include "framework/training/toy_problem.h"
#include "framework/training/trainer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/control/while/counter_net.h"
#include "platform/cuda_allocator.h"
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

NetDef Load(const std::string& path) {
  absl::StatusOr<NetDef> net = LoadNet(path);
  EXPECT_TRUE(net.ok()) << net.status();
  return net.ok() ? *net : NetDef();
}

// Runs the startup net on the CPU (its random initializers are the CPU's),
// then returns a scope holding copies of its parameters on `place`.
std::unique_ptr<Scope> ParamsOn(const NetDef& startup, const Place& place) {
  Scope cpu;
  Executor executor;
  auto prepared = executor.Prepare(startup, 0, CPUPlace());
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_TRUE(executor.Run(*prepared, cpu, {}, {}).ok());
  auto scope = std::make_unique<Scope>();
  for (const std::string& name : cpu.LocalVarNames()) {
    const Tensor& tensor = *cpu.FindVar(name)->Get<Tensor>().value();
    *scope->Var(name)->GetMutable<Tensor>().value() =
        tensor.CopyTo(place).value();
  }
  return scope;
}

Tensor HostCopy(const Tensor& tensor) {
  return tensor.CopyTo(CPUPlace()).value();
}

::testing::AssertionResult Near(const Tensor& cpu, const Tensor& gpu,
                                double tol) {
  if (cpu.dims() != gpu.dims() || cpu.dtype() != kFloat32) {
    return ::testing::AssertionFailure()
           << cpu.DebugString() << " vs " << gpu.DebugString();
  }
  const Tensor host = HostCopy(gpu);
  for (int64_t i = 0; i < cpu.numel(); ++i) {
    const float a = cpu.data<float>()[i];
    const float b = host.data<float>()[i];
    if (!(std::fabs(a - b) <= tol * (1 + std::fabs(a)))) {
      return ::testing::AssertionFailure()
             << "element " << i << ": cpu " << a << ", cuda " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

// The example net `name` on the CPU and on cuda:0, from the same
// parameters and input.
void ExpectExampleMatches(const std::string& name, int64_t batch) {
  const NetDef startup = Load("examples/" + name + "/startup.pbtxt");
  const NetDef main = Load("examples/" + name + "/main.pbtxt");
  const Tensor image = RandomTensor(kFloat32, {batch, 64}, 7, 0.0, 16.0);
  std::vector<Tensor> results;
  for (const Place& place : {CPUPlace(), CUDAPlace(0)}) {
    std::unique_ptr<Scope> scope = ParamsOn(startup, place);
    Executor executor;
    auto prepared = executor.Prepare(main, 0, place);
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    if (place.is_cuda()) {
      for (const PreparedOp& op : prepared->ops()) {
        EXPECT_TRUE(op.kernel_place.is_cuda())
            << "op " << op.index << " (" << op.spec->type()
            << ") has no CUDA kernel";
      }
    }
    auto out =
        executor.Run(*prepared, *scope, {{"image", image}}, {"probabilities"});
    ASSERT_TRUE(out.ok()) << out.status();
    results.push_back((*out)[0]);
  }
  EXPECT_TRUE(Near(results[0], results[1], 1e-4));
}

TEST(ExecutorCudaTest, MlpExampleMatchesCpu) {
  SF_REQUIRE_CUDA();
  ExpectExampleMatches("mlp", 1);
  ExpectExampleMatches("mlp", 37);
}

TEST(ExecutorCudaTest, CnnExampleMatchesCpu) {
  SF_REQUIRE_CUDA();
  ExpectExampleMatches("cnn", 1);
  ExpectExampleMatches("cnn", 16);
}

// relu (CUDA) -> resize (CPU kernel only) -> relu (CUDA).
constexpr char kMixedNet[] = R"pb(
  format_version: 1
  name: "mixed"
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 1, 2, 3, 3 ]
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "x" }
      outputs { slot: "Out" vars: "a" }
    }
    ops {
      type: "resize"
      inputs { slot: "X" vars: "a" }
      outputs { slot: "Out" vars: "b" }
      attrs {
        name: "scales"
        floats { values: [ 1, 1, 2, 2 ] }
      }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "b" }
      outputs { slot: "Out" vars: "y" }
    }
  }
)pb";

TEST(ExecutorCudaTest, OpWithoutCudaKernelRunsOnHostCopies) {
  SF_REQUIRE_CUDA();
  absl::StatusOr<NetDef> net = ParseNetText(kMixedNet);
  ASSERT_TRUE(net.ok()) << net.status();
  const Tensor x = RandomTensor(kFloat32, {1, 2, 3, 3}, 3);
  Executor executor;
  auto cpu = executor.Prepare(*net, 0, CPUPlace());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto gpu = executor.Prepare(*net, 0, CUDAPlace(0));
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ASSERT_EQ(gpu->ops().size(), 3u);
  EXPECT_TRUE(gpu->ops()[0].kernel_place.is_cuda());
  EXPECT_TRUE(gpu->ops()[1].kernel_place.is_cpu());
  EXPECT_TRUE(gpu->ops()[2].kernel_place.is_cuda());
  Scope scope;
  auto want = executor.Run(*cpu, scope, {{"x", x}}, {"y", "b"});
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = executor.Run(*gpu, scope, {{"x", x}}, {"y", "b"});
  ASSERT_TRUE(got.ok()) << got.status();
  // The host op's output went back to the device.
  EXPECT_TRUE((*got)[1].place().is_cuda());
  EXPECT_TRUE(Near((*want)[0], (*got)[0], 1e-6));
}

TEST(ExecutorCudaTest, ParametersLeftOnTheHostAreCopiedForEachRun) {
  SF_REQUIRE_CUDA();
  const NetDef startup = Load("examples/mlp/startup.pbtxt");
  const NetDef main = Load("examples/mlp/main.pbtxt");
  std::unique_ptr<Scope> host = ParamsOn(startup, CPUPlace());
  const Tensor image = RandomTensor(kFloat32, {5, 64}, 9, 0.0, 16.0);
  Executor executor;
  auto cpu = executor.Prepare(main, 0, CPUPlace());
  auto gpu = executor.Prepare(main, 0, CUDAPlace(0));
  ASSERT_TRUE(cpu.ok() && gpu.ok());
  auto want = executor.Run(*cpu, *host, {{"image", image}}, {"probabilities"});
  auto got = executor.Run(*gpu, *host, {{"image", image}}, {"probabilities"});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(Near((*want)[0], (*got)[0], 1e-4));
  // The scope's parameters stay where the caller put them.
  EXPECT_TRUE(host->FindVar("fc1.w")->Get<Tensor>().value()->place().is_cpu());
}

TEST(ExecutorCudaTest, WhileLoopRunsItsBlockOnTheDevice) {
  SF_REQUIRE_CUDA();
  absl::StatusOr<NetDef> net = ParseNetText(
      absl::StrCat("format_version: 1 name: \"counter\" ", kCounterLoopBlocks));
  ASSERT_TRUE(net.ok()) << net.status();
  Executor executor;
  auto prepared = executor.Prepare(*net, 0, CUDAPlace(0));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  for (int64_t n : {0, 1, 5, 40}) {
    Scope scope;
    auto out = executor.Run(*prepared, scope,
                            {{"n", MakeTensor<int64_t>({1}, {n})}}, {"i", "s"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE((*out)[1].place().is_cuda());
    EXPECT_EQ(Values<int64_t>(HostCopy((*out)[0]))[0], n);
    EXPECT_EQ(Values<int64_t>(HostCopy((*out)[1]))[0], n * (n + 1) / 2);
  }
}

constexpr char kSgdNet[] = R"pb(
  format_version: 1
  name: "sgd"
  blocks {
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 4 ]
      persistable: true
    }
    vars {
      name: "g"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 4 ]
    }
    vars {
      name: "lr"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 1 ]
    }
    ops {
      type: "sgd"
      inputs { slot: "Param" vars: "w" }
      inputs { slot: "Grad" vars: "g" }
      inputs { slot: "LearningRate" vars: "lr" }
      outputs { slot: "ParamOut" vars: "w" }
    }
  }
)pb";

TEST(ExecutorCudaTest, UpdatingAParameterLeftOnTheHostIsAClearError) {
  SF_REQUIRE_CUDA();
  absl::StatusOr<NetDef> net = ParseNetText(kSgdNet);
  ASSERT_TRUE(net.ok()) << net.status();
  Scope scope;
  *scope.Var("w")->GetMutable<Tensor>().value() =
      RandomTensor(kFloat32, {4}, 1);
  Executor executor;
  auto prepared = executor.Prepare(*net, 0, CUDAPlace(0));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const std::vector<Feed> feeds = {{"g", RandomTensor(kFloat32, {4}, 2)},
                                   {"lr", RandomTensor(kFloat32, {1}, 3)}};
  auto run = executor.Run(*prepared, scope, feeds, {});
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(run.status().message(),
              HasSubstr("persistable variable \"w\" is on cpu"));
  // Moved to the device, the same run works and updates it there.
  Tensor& w = *scope.Var("w")->GetMutable<Tensor>().value();
  const Tensor before = w;
  w = before.CopyTo(CUDAPlace(0)).value();
  ASSERT_TRUE(executor.Run(*prepared, scope, feeds, {}).ok());
  const Tensor after = HostCopy(w);
  const float lr = feeds[1].tensor.data<float>()[0];
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(after.data<float>()[i],
                before.data<float>()[i] - lr * feeds[0].tensor.data<float>()[i],
                1e-6);
  }
}

TEST(ExecutorCudaTest, ConcurrentRunsMatchASingleThread) {
  SF_REQUIRE_CUDA();
  const NetDef startup = Load("examples/cnn/startup.pbtxt");
  const NetDef main = Load("examples/cnn/main.pbtxt");
  std::unique_ptr<Scope> params = ParamsOn(startup, CUDAPlace(0));
  Executor executor;
  auto prepared = executor.Prepare(main, 0, CUDAPlace(0));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(RandomTensor(kFloat32, {8, 64}, 100 + t, 0.0, 16.0));
    auto out = executor.Run(*prepared, *params, {{"image", inputs[t]}},
                            {"probabilities"});
    ASSERT_TRUE(out.ok()) << out.status();
    expected.push_back(HostCopy((*out)[0]));
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        auto out = executor.Run(*prepared, *params, {{"image", inputs[t]}},
                                {"probabilities"});
        if (!out.ok() || !Near(expected[t], (*out)[0], 0)) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << t;
}

TEST(ExecutorCudaTest, SteadyRunsTakeNoNewDeviceMemory) {
  SF_REQUIRE_CUDA();
  const NetDef startup = Load("examples/cnn/startup.pbtxt");
  const NetDef main = Load("examples/cnn/main.pbtxt");
  std::unique_ptr<Scope> params = ParamsOn(startup, CUDAPlace(0));
  Executor executor;
  auto prepared = executor.Prepare(main, 0, CUDAPlace(0));
  ASSERT_TRUE(prepared.ok());
  const Tensor image = RandomTensor(kFloat32, {16, 64}, 4, 0.0, 16.0);
  ASSERT_TRUE(
      executor.Run(*prepared, *params, {{"image", image}}, {"probabilities"})
          .ok());
  const BlockCacheStats before = GetCudaMemoryStats(CUDAPlace(0)).value();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        executor.Run(*prepared, *params, {{"image", image}}, {"probabilities"})
            .ok());
  }
  const BlockCacheStats after = GetCudaMemoryStats(CUDAPlace(0)).value();
  EXPECT_EQ(after.segment_allocations, before.segment_allocations);
  EXPECT_GT(after.cache_hits, before.cache_hits);
}

TEST(ExecutorCudaTest, OutOfDeviceMemoryIsAnErrorAndTheProcessGoesOn) {
  SF_REQUIRE_CUDA();
  ASSERT_TRUE(ReleaseCachedCudaMemory(CUDAPlace(0)).ok());
  const BlockCacheStats stats = GetCudaMemoryStats(CUDAPlace(0)).value();
  // Room for what is held now and little more.
  ASSERT_TRUE(
      SetCudaMemoryLimit(CUDAPlace(0), stats.bytes_reserved + (4 << 20)).ok());
  Tensor big;
  absl::Status status = big.Allocate(CUDAPlace(0), kFloat32, {64 << 20});
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("bytes asked"));
  EXPECT_THAT(status.message(), HasSubstr("cuda:0"));
  ASSERT_TRUE(SetCudaMemoryLimit(CUDAPlace(0), 0).ok());
  EXPECT_TRUE(big.Allocate(CUDAPlace(0), kFloat32, {64 << 20}).ok());
}

TEST(ExecutorCudaTest, DeviceToHostCopiesLandInPageLockedMemory) {
  SF_REQUIRE_CUDA();
  const Tensor x = RandomTensor(kFloat32, {1000}, 5);
  const Tensor device = x.CopyTo(CUDAPlace(0)).value();
  const Tensor back = HostCopy(device);
  EXPECT_TRUE(IsPageLockedHostMemory(back.raw_data()));
  EXPECT_EQ(Values<float>(back), Values<float>(x));
}

class TrainingCudaTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainingCudaTest, StepsMatchTheCpu) {
  SF_REQUIRE_CUDA();
  const NetDef startup = ToyStartupNet();
  const NetDef main = ToyMainNet();
  const Dataset data = Clusters(96);
  std::vector<std::vector<double>> losses(2);
  std::vector<std::unique_ptr<Trainer>> trainers;
  int which = 0;
  for (const Place& place : {CPUPlace(), CUDAPlace(0)}) {
    TrainerOptions options;
    options.batch_size = 16;
    options.epochs = 2;
    options.place = place;
    options.optimizer.type = GetParam();
    options.optimizer.learning_rate = 0.05f;
    auto trainer = Trainer::Create(startup, main, options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    ASSERT_TRUE((*trainer)->Initialize().ok());
    absl::Status trained =
        (*trainer)->TrainUntil(data, 12, [&](const StepReport& report) {
          losses[which].push_back(report.loss);
        });
    ASSERT_TRUE(trained.ok()) << trained;
    trainers.push_back(std::move(*trainer));
    ++which;
  }
  ASSERT_EQ(losses[0].size(), 12u);
  ASSERT_EQ(losses[1].size(), 12u);
  for (size_t s = 0; s < losses[0].size(); ++s) {
    EXPECT_NEAR(losses[1][s], losses[0][s], 1e-4 * (1 + losses[0][s]))
        << "step " << s;
  }
  // The parameters stayed on their places and agree.
  for (const char* name : {"w1", "b2"}) {
    const Tensor& cpu =
        *trainers[0]->scope().FindVar(name)->Get<Tensor>().value();
    const Tensor& gpu =
        *trainers[1]->scope().FindVar(name)->Get<Tensor>().value();
    EXPECT_TRUE(gpu.place().is_cuda()) << name;
    EXPECT_TRUE(Near(cpu, gpu, 1e-4)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, TrainingCudaTest,
                         ::testing::Values("sgd", "momentum", "adam"));

}  // namespace
}  // namespace scopeflow
