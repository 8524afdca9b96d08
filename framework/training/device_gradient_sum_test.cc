// Data-parallel gradients on a CUDA device, as the issue asks with one GPU:
// two replicas on one device summed there, then all-reduced by NCCL over a
// single rank; the floats are those the host's GradientReducer computes.
// Without a device (or GPU code) the device half skips.
#include "framework/training/device_gradient_sum.h"

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/parallel/nccl_communicator.h"
#include "framework/training/gradient_reducer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/cuda_runtime.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

Tensor Random(const Dims& dims, uint32_t seed) {
  Tensor tensor;
  EXPECT_TRUE(tensor.Allocate(CPUPlace(), kFloat32, dims).ok());
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0, 1);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<float>()[i] = normal(rng);
  }
  return tensor;
}

TEST(DeviceGradientSumTest, TwoReplicasOnOneDeviceThenOneNcclRank) {
  if (CudaDeviceCount() == 0) {
    GTEST_SKIP() << "no CUDA device (or a build without GPU code): the sum "
                    "on a device and NCCL need one";
  }
  const Dims dims = {300, 7};
  const std::vector<std::vector<Tensor>> host = {{Random(dims, 1)},
                                                 {Random(dims, 2)}};
  GradientReducer reducer;
  ASSERT_TRUE(reducer.Start(host, {"w@GRAD"}, 0.5f).ok());
  reducer.ReducePart(0, 1);

  absl::StatusOr<Tensor> replica0 = host[0][0].CopyTo(CUDAPlace(0));
  absl::StatusOr<Tensor> replica1 = host[1][0].CopyTo(CUDAPlace(0));
  ASSERT_TRUE(replica0.ok()) << replica0.status();
  ASSERT_TRUE(replica1.ok()) << replica1.status();
  Tensor sum;
  absl::Status summed =
      SumReplicasOnDevice({&*replica0, &*replica1}, 0.5f, sum);
  ASSERT_TRUE(summed.ok()) << summed;
  EXPECT_TRUE(sum.place().is_cuda());
  EXPECT_EQ(sum.dims(), dims);

  absl::StatusOr<std::unique_ptr<Communicator>> nccl = NewNcclCommunicator(0);
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  EXPECT_EQ((*nccl)->rank(), 0);
  EXPECT_EQ((*nccl)->size(), 1);
  absl::Status all_reduced =
      (*nccl)->AllReduceSum(sum.data<float>(), sum.numel());
  ASSERT_TRUE(all_reduced.ok()) << all_reduced;
  absl::Status broadcast = (*nccl)->Broadcast(
      sum.data<float>(), static_cast<int64_t>(sum.nbytes()), 0);
  ASSERT_TRUE(broadcast.ok()) << broadcast;

  absl::StatusOr<Tensor> back = sum.CopyTo(CPUPlace());
  ASSERT_TRUE(back.ok()) << back.status();
  const Tensor& want = reducer.sums()[0];
  ASSERT_EQ(back->numel(), want.numel());
  EXPECT_EQ(std::memcmp(back->data<float>(), want.data<float>(), want.nbytes()),
            0);
}

// These run on every machine.
TEST(DeviceGradientSumTest, ErrorsNameTheDeviceOrTheReplica) {
  const int missing = CudaDeviceCount();
  absl::StatusOr<std::unique_ptr<Communicator>> nccl =
      NewNcclCommunicator(missing);
  ASSERT_FALSE(nccl.ok());
  EXPECT_THAT(nccl.status().message(),
              HasSubstr(absl::StrCat("NCCL on cuda:", missing, ": ")));
  EXPECT_THAT(nccl.status().message(),
              HasSubstr(NcclAvailable() ? "this process sees"
                                        : "this build has no GPU code"));

  const Tensor on_host = Random({4}, 3);
  Tensor out;
  absl::Status host = SumReplicasOnDevice({&on_host}, 1.0f, out);
  ASSERT_FALSE(host.ok());
  EXPECT_THAT(host.message(),
              HasSubstr("gradient of replica 0 is Tensor<float32, [4], cpu>"));
  EXPECT_THAT(host.message(), HasSubstr("expected a float32 tensor on"));
  EXPECT_FALSE(SumReplicasOnDevice({}, 1.0f, out).ok());
}

}  // namespace
}  // namespace scopeflow
