// Helpers for tests of CUDA kernels: each runs an op on the CPU and on
// cuda:0 and compares. Without a CUDA device (or GPU code) the tests skip.
#ifndef SCOPEFLOW_FRAMEWORK_CUDA_TEST_UTIL_H_
#define SCOPEFLOW_FRAMEWORK_CUDA_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/tensor.h"
#include "gtest/gtest.h"
#include "platform/place.h"

namespace scopeflow {

// Whether this binary has GPU code and a CUDA device is present.
bool HasCudaDevice();

// Skips the test where HasCudaDevice() is false.
#define SF_REQUIRE_CUDA()                                             \
  do {                                                                \
    if (!::scopeflow::HasCudaDevice()) {                              \
      GTEST_SKIP() << "no CUDA device (or a build without GPU code)"; \
    }                                                                 \
  } while (false)

// A CPU tensor of `dims` with values drawn uniformly from [lo, hi) with
// `seed` (rounded toward zero for integer dtypes; bools are value > 0).
Tensor RandomTensor(DataType dtype, Dims dims, uint64_t seed, double lo = -1.0,
                    double hi = 1.0);

// Runs the op written in protobuf text format (as RunOp in op_test_util.h:
// each feed a declared input with its dtype and shape) on `place`. Feeds
// are CPU tensors, copied there by the run; the fetches come back on the
// CPU.
absl::StatusOr<std::vector<Tensor>> RunOpOnPlace(
    const Place& place, const std::string& op_text,
    const std::vector<Feed>& feeds, const std::vector<std::string>& fetches);

// Where the executor runs the op on cuda:0: kCUDA when it has a CUDA kernel
// for the dtype the executor picks, kCPU when it falls back to the CPU one.
absl::StatusOr<DeviceType> KernelDeviceOnCuda(const std::string& op_text,
                                              const std::vector<Feed>& feeds);

// Runs the op on the CPU and on cuda:0 and compares every fetch: dtype,
// dims, and each element equal (infinities included) or within atol +
// rtol * |cpu| (NaN matches NaN only; integer and bool dtypes exactly;
// float16 and other dtypes byte for byte). Fails first if the op has no
// CUDA kernel, so a pass is never the CPU kernel compared with itself.
::testing::AssertionResult MatchesOnCuda(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches, double rtol = 1e-5,
    double atol = 1e-6);

// MatchesOnCuda, except that float16 fetches compare element by element,
// bit for bit but with any NaN matching any NaN (the two devices may give
// NaNs of different bits).
::testing::AssertionResult MatchesOnCudaAnyNaN(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches, double rtol = 1e-5,
    double atol = 1e-6);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_CUDA_TEST_UTIL_H_
