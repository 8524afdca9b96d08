#include "framework/cuda_test_util.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "absl/strings/str_format.h"
#include "framework/float16.h"
#include "framework/op_test_util.h"
#include "platform/cuda_runtime.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

template <typename T>
void FillRandom(Tensor& tensor, uint64_t seed, double lo, double hi) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  T* data = tensor.data<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    data[i] = static_cast<T>(uniform(engine));
  }
}

// Element i of a CPU tensor as a double (float16 through float).
double ValueAt(const Tensor& tensor, int64_t i) {
  switch (tensor.dtype()) {
    case kFloat32:
      return tensor.data<float>()[i];
    case kFloat64:
      return tensor.data<double>()[i];
    case kFloat16:
      return HalfToFloat(tensor.data<float16>()[i]);
    case kInt32:
      return tensor.data<int32_t>()[i];
    case kInt64:
      return static_cast<double>(tensor.data<int64_t>()[i]);
    case kBool:
      return tensor.data<bool>()[i] ? 1.0 : 0.0;
    case kUInt8:
      return tensor.data<uint8_t>()[i];
    default:
      // Compared byte for byte instead (see CompareOnCuda).
      return std::nan("");
  }
}

// MatchesOnCuda, and with `float16_any_nan` MatchesOnCudaAnyNaN.
::testing::AssertionResult CompareOnCuda(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches, double rtol, double atol,
    bool float16_any_nan) {
  absl::StatusOr<DeviceType> device = KernelDeviceOnCuda(op_text, feeds);
  if (!device.ok()) {
    return ::testing::AssertionFailure()
           << "preparing on cuda:0: " << device.status();
  }
  if (*device != DeviceType::kCUDA) {
    return ::testing::AssertionFailure()
           << "the op has no CUDA kernel for these inputs: " << op_text;
  }
  absl::StatusOr<std::vector<Tensor>> cpu =
      RunOpOnPlace(CPUPlace(), op_text, feeds, fetches);
  if (!cpu.ok()) {
    return ::testing::AssertionFailure() << "on the CPU: " << cpu.status();
  }
  absl::StatusOr<std::vector<Tensor>> gpu =
      RunOpOnPlace(CUDAPlace(0), op_text, feeds, fetches);
  if (!gpu.ok()) {
    return ::testing::AssertionFailure() << "on cuda:0: " << gpu.status();
  }
  for (size_t f = 0; f < fetches.size(); ++f) {
    const Tensor& want = (*cpu)[f];
    const Tensor& got = (*gpu)[f];
    if (want.dtype() != got.dtype() || want.dims() != got.dims()) {
      return ::testing::AssertionFailure()
             << "fetch " << fetches[f] << ": cpu " << want.DebugString()
             << ", cuda " << got.DebugString();
    }
    const bool half = want.dtype() == kFloat16;
    const bool exact = want.dtype() != kFloat32 && want.dtype() != kFloat64;
    if (!(half && float16_any_nan) && want.numel() > 0 && exact &&
        (half || std::isnan(ValueAt(want, 0)))) {
      // float16, or a dtype ValueAt does not read: the same bytes, or a
      // mismatch.
      if (std::memcmp(want.raw_data(), got.raw_data(), want.nbytes()) != 0) {
        return ::testing::AssertionFailure()
               << "fetch " << fetches[f] << ": the bytes differ";
      }
      continue;
    }
    for (int64_t i = 0; i < want.numel(); ++i) {
      const double w = ValueAt(want, i);
      const double g = ValueAt(got, i);
      bool match;
      if (half) {
        // Bit for bit; NaN matches NaN whatever its bits.
        match = want.data<float16>()[i] == got.data<float16>()[i] ||
                (std::isnan(w) && std::isnan(g));
      } else if (want.dtype() == kInt64) {
        // Exactly, past the 2^53 a double holds.
        match = want.data<int64_t>()[i] == got.data<int64_t>()[i];
      } else {
        // Equal values match: infinities too, whose difference is NaN.
        match = std::isnan(w)
                    ? std::isnan(g)
                    : (g == w || (!exact && std::fabs(g - w) <=
                                                atol + rtol * std::fabs(w)));
      }
      if (!match) {
        return ::testing::AssertionFailure() << absl::StrFormat(
                   "fetch %s element %d of %d: cpu %.9g, cuda "
                   "%.9g",
                   fetches[f], i, want.numel(), w, g);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

bool HasCudaDevice() { return CudaDeviceCount() > 0; }

Tensor RandomTensor(DataType dtype, Dims dims, uint64_t seed, double lo,
                    double hi) {
  Tensor tensor;
  if (!tensor.Allocate(CPUPlace(), dtype, std::move(dims)).ok()) return tensor;
  switch (dtype) {
    case kFloat32:
      FillRandom<float>(tensor, seed, lo, hi);
      break;
    case kFloat64:
      FillRandom<double>(tensor, seed, lo, hi);
      break;
    case kInt32:
      FillRandom<int32_t>(tensor, seed, lo, hi);
      break;
    case kInt64:
      FillRandom<int64_t>(tensor, seed, lo, hi);
      break;
    case kBool: {
      std::mt19937_64 engine(seed);
      std::uniform_real_distribution<double> uniform(lo, hi);
      bool* data = tensor.data<bool>();
      for (int64_t i = 0; i < tensor.numel(); ++i) {
        data[i] = uniform(engine) > 0;
      }
      break;
    }
    default:
      break;
  }
  return tensor;
}

absl::StatusOr<std::vector<Tensor>> RunOpOnPlace(
    const Place& place, const std::string& op_text,
    const std::vector<Feed>& feeds, const std::vector<std::string>& fetches) {
  SF_ASSIGN_OR_RETURN(NetDef net, OneOpNet(op_text, DeclareFeeds(feeds)));
  Executor executor;
  SF_ASSIGN_OR_RETURN(PreparedNet prepared, executor.Prepare(net, 0, place));
  Scope scope;
  SF_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      executor.Run(prepared, scope, feeds, fetches));
  for (Tensor& tensor : out) {
    if (!tensor.place().is_cpu()) {
      SF_ASSIGN_OR_RETURN(tensor, tensor.CopyTo(CPUPlace()));
    }
  }
  return out;
}

absl::StatusOr<DeviceType> KernelDeviceOnCuda(const std::string& op_text,
                                              const std::vector<Feed>& feeds) {
  SF_ASSIGN_OR_RETURN(NetDef net, OneOpNet(op_text, DeclareFeeds(feeds)));
  SF_ASSIGN_OR_RETURN(PreparedNet prepared,
                      Executor().Prepare(net, 0, CUDAPlace(0)));
  SF_CHECK(prepared.ops().size() == 1, "expected one op, prepared %d",
           prepared.ops().size());
  return prepared.ops()[0].kernel_place.type();
}

::testing::AssertionResult MatchesOnCuda(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches, double rtol, double atol) {
  return CompareOnCuda(op_text, feeds, fetches, rtol, atol,
                       /*float16_any_nan=*/false);
}

::testing::AssertionResult MatchesOnCudaAnyNaN(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches, double rtol, double atol) {
  return CompareOnCuda(op_text, feeds, fetches, rtol, atol,
                       /*float16_any_nan=*/true);
}

}  // namespace scopeflow
