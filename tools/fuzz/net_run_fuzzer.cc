// libFuzzer target for running nets: what the net target prepares, run.
//
// Prepare checks a net's ops, attributes and inferred shapes; what it lets
// through reaches the kernels. So every block 0 that prepares is run once
// on small feeds: each input the net must be fed, and each parameter it
// reads before writing, gets a tensor of its inferred shape (free
// dimensions 2) holding values from a generator seeded by the input bytes:
// small numbers (indices and sizes a kernel must check as much as large
// ones), and raw bytes for the 16- and 8-bit floats (NaNs and infinities
// included). A run may fail with any error; a crash, a sanitizer report or
// a hang is a bug. Runs stop at a deadline (a while loop that never ends
// is the net's choice, not a hang), and nets whose inferred variables are
// large are prepared only, so that every input runs in milliseconds.
// Build and run: tools/fuzz/run.sh (see tools/fuzz/README.md).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/block_runner.h"
#include "framework/data_type.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/prepared_net.h"
#include "framework/run_cancellation.h"
#include "framework/scope.h"
#include "framework/tensor.h"
#include "google/protobuf/stubs/logging.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace {

using scopeflow::Dims;
using scopeflow::Tensor;

// What a free (-1) dimension becomes in a fed tensor.
constexpr int64_t kFreeDim = 2;
// A net with a variable of more elements than this (as inferred, free
// dimensions at kFreeDim) is not run: its kernels could take seconds.
constexpr int64_t kMaxElements = int64_t{1} << 16;
// A run stops at its next op past this.
constexpr auto kRunDeadline = std::chrono::milliseconds(500);

// The shape a fed tensor gets; false when it is too large to run.
bool FedDims(const scopeflow::VarInfo& info, Dims& dims) {
  dims.clear();
  if (!info.has_dims) return true;  // a scalar-like [] tensor
  int64_t elements = 1;
  for (const int64_t dim : info.dims) {
    const int64_t fed = dim < 0 ? kFreeDim : dim;
    dims.push_back(fed);
    elements *= fed;
    if (elements > kMaxElements) return false;
  }
  return true;
}

template <typename T>
void FillSmall(Tensor& tensor, std::mt19937_64& random, int low, int high) {
  std::uniform_int_distribution<int> value(low, high);
  T* data = tensor.data<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    data[i] = static_cast<T>(value(random));
  }
}

template <typename T>
void FillReal(Tensor& tensor, std::mt19937_64& random) {
  std::uniform_real_distribution<double> value(-3.0, 3.0);
  T* data = tensor.data<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    data[i] = static_cast<T>(value(random));
  }
}

// Fills `tensor` (allocated on the CPU) as the header says.
void Fill(Tensor& tensor, std::mt19937_64& random) {
  switch (tensor.dtype()) {
    case scopeflow::kFloat32:
      return FillReal<float>(tensor, random);
    case scopeflow::kFloat64:
      return FillReal<double>(tensor, random);
    case scopeflow::kInt32:
      return FillSmall<int32_t>(tensor, random, -1, 3);
    case scopeflow::kInt64:
      return FillSmall<int64_t>(tensor, random, -1, 3);
    case scopeflow::kInt16:
      return FillSmall<int16_t>(tensor, random, -1, 3);
    case scopeflow::kInt8:
      return FillSmall<int8_t>(tensor, random, -1, 3);
    case scopeflow::kUInt8:
      return FillSmall<uint8_t>(tensor, random, 0, 3);
    case scopeflow::kUInt16:
      return FillSmall<uint16_t>(tensor, random, 0, 3);
    case scopeflow::kUInt32:
      return FillSmall<uint32_t>(tensor, random, 0, 3);
    case scopeflow::kUInt64:
      return FillSmall<uint64_t>(tensor, random, 0, 3);
    case scopeflow::kBool:
      return FillSmall<bool>(tensor, random, 0, 1);
    default: {
      auto* bytes = static_cast<unsigned char*>(tensor.raw_data());
      for (size_t i = 0; i < tensor.nbytes(); ++i) bytes[i] = random() & 0xff;
      return;
    }
  }
}

// A tensor of variable v's inferred type and shape, filled; an error
// (not run) when it would be too large or its type has no elements.
absl::StatusOr<Tensor> MakeTensor(const scopeflow::PreparedNet& prepared,
                                  int v, std::mt19937_64& random) {
  const scopeflow::VarInfo& info = prepared.var_infos()[v];
  Dims dims;
  if (!FedDims(info, dims)) return absl::OutOfRangeError("too large");
  const scopeflow::DataType dtype =
      info.dtype == scopeflow::DATA_TYPE_UNSPECIFIED ? scopeflow::kFloat32
                                                     : info.dtype;
  if (scopeflow::SizeOf(dtype) == 0) {
    return absl::InvalidArgumentError("no element type");
  }
  Tensor tensor;
  absl::Status allocated =
      tensor.Allocate(scopeflow::CPUPlace(), dtype, std::move(dims));
  if (!allocated.ok()) return allocated;
  Fill(tensor, random);
  return tensor;
}

// Whether every variable Prepare sized is small enough to run.
bool SmallEnough(const scopeflow::PreparedNet& prepared) {
  Dims dims;
  for (const scopeflow::VarInfo& info : prepared.var_infos()) {
    if (!FedDims(info, dims)) return false;
  }
  return true;
}

void RunBlockZero(const absl::StatusOr<scopeflow::NetDef>& net,
                  uint64_t seed) {
  if (!net.ok() || net->blocks_size() == 0) return;
  const scopeflow::Executor executor;
  const absl::StatusOr<scopeflow::PreparedNet> prepared =
      executor.Prepare(*net, 0, scopeflow::CPUPlace());
  if (!prepared.ok() || !SmallEnough(*prepared)) return;

  std::mt19937_64 random(seed);
  scopeflow::Scope scope;
  // Parameters the net reads before writing must be in the scope.
  for (const int v : prepared->scope_bound()) {
    if (prepared->is_input(v) || !prepared->is_tensor(v) ||
        prepared->is_external(v) || !prepared->is_read_first(v)) {
      continue;
    }
    absl::StatusOr<Tensor> tensor = MakeTensor(*prepared, v, random);
    if (!tensor.ok()) return;
    absl::StatusOr<Tensor*> slot =
        scope.Var(prepared->var_names()[v])->GetMutable<Tensor>();
    if (!slot.ok()) return;
    **slot = *std::move(tensor);
  }
  std::vector<scopeflow::Feed> feeds;
  for (const std::string& name : prepared->input_names()) {
    const int v = prepared->VarIndex(name);
    if (v < 0) return;
    absl::StatusOr<Tensor> tensor = MakeTensor(*prepared, v, random);
    if (!tensor.ok()) return;
    feeds.push_back({name, *std::move(tensor)});
  }
  const scopeflow::RunCancellation deadline(
      scopeflow::RunCancellation::Clock::now() + kRunDeadline);
  executor
      .Run(*prepared, scope, feeds, /*fetches=*/{}, /*profile=*/nullptr,
           &deadline)
      .IgnoreError();
}

void DiscardLog(google::protobuf::LogLevel, const char*, int,
                const std::string&) {}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The binary parser logs each string field that is not UTF-8.
  google::protobuf::SetLogHandler(&DiscardLog);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The same input always runs on the same values, so a crash replays.
  const uint64_t seed = std::hash<std::string_view>()(
      std::string_view(reinterpret_cast<const char*>(data), size));
  RunBlockZero(scopeflow::ParseNetBinary(bytes), seed);
  RunBlockZero(scopeflow::ParseNetText(bytes), seed);
  return 0;
}
