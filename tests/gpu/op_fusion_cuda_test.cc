// The executor's op fusion (framework/passes/op_fusion.h) on a CUDA place: an MLP
// written as ONNX writes it runs as fc ops on the device, with the results
// of the net as written on the CPU, also where a fetch needs a variable
// the fusion removed.
#include <string>
#include <vector>

#include "framework/cuda_test_util.h"
#include "framework/executor.h"
#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/onnx_style_mlp.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;

// Runs the MLP on `place` (its parameters copied there) and returns the
// fetches on the host.
std::vector<Tensor> RunMlp(const Place& place, const ExecutorOptions& options,
                           const std::vector<std::string>& fetches) {
  OnnxStyleMlp mlp = MakeOnnxStyleMlp();
  Scope scope;
  for (const auto& [name, tensor] : mlp.parameters) {
    **scope.Var(name)->GetMutable<Tensor>() = tensor.CopyTo(place).value();
  }
  Executor executor(options);
  absl::StatusOr<PreparedNet> prepared = executor.Prepare(mlp.net, 0, place);
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out =
      executor.Run(*prepared, scope, {{"x", OnnxStyleMlpInput(9)}}, fetches);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  std::vector<Tensor> host;
  for (const Tensor& tensor : *out) {
    host.push_back(tensor.CopyTo(CPUPlace()).value());
  }
  return host;
}

TEST(OpFusionCudaTest, RunsTheLayersAsFcOpsOnTheDevice) {
  SF_REQUIRE_CUDA();
  const OnnxStyleMlp mlp = MakeOnnxStyleMlp();
  absl::StatusOr<PreparedNet> prepared =
      Executor().Prepare(mlp.net, 0, CUDAPlace(0));
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_TRUE(prepared->rewritten());
  EXPECT_THAT(PreparedOpTypes(*prepared),
              ElementsAre("fc+relu", "fc", "softmax"));
  for (const PreparedOp& op : prepared->ops()) {
    EXPECT_TRUE(op.kernel_place.is_cuda()) << op.spec->type();
  }
}

TEST(OpFusionCudaTest, GivesTheResultsOfTheNetAsWrittenOnTheCpu) {
  SF_REQUIRE_CUDA();
  // The second and third fetches are fused away: that run takes the net as
  // written on the device.
  for (const std::vector<std::string>& fetches :
       {std::vector<std::string>{"probabilities", "h0.relu"},
        std::vector<std::string>{"probabilities", "h0.product", "h0"}}) {
    const std::vector<Tensor> device =
        RunMlp(CUDAPlace(0), ExecutorOptions(), fetches);
    const std::vector<Tensor> cpu =
        RunMlp(CPUPlace(), ExecutorOptions::AsWritten(), fetches);
    ASSERT_EQ(device.size(), fetches.size());
    ASSERT_EQ(cpu.size(), fetches.size());
    for (size_t i = 0; i < fetches.size(); ++i) {
      SCOPED_TRACE(fetches[i]);
      ExpectNearTensors(device[i], cpu[i]);
    }
  }
}

}  // namespace
}  // namespace scopeflow
