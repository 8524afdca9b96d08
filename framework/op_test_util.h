// Helpers for operator tests: build tensors and run one op through the
// executor, as a net would.
#ifndef SCOPEFLOW_FRAMEWORK_OP_TEST_UTIL_H_
#define SCOPEFLOW_FRAMEWORK_OP_TEST_UTIL_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/tensor.h"

namespace scopeflow {

// The number of elements where `actual` differs from `expected` by more
// than `rel_tol` times |expected| (0: any difference); NaN matches NaN
// only. `first` describes the first mismatch. For tests on large tensors,
// where one expectation per element would flood the log.
int64_t CountMismatches(const std::vector<float>& actual,
                        const std::vector<double>& expected, double rel_tol,
                        std::string* first);

// A CPU tensor of `dims` holding `values` (row-major).
template <typename T>
Tensor MakeTensor(Dims dims, const std::vector<T>& values) {
  Tensor tensor;
  absl::Status status = tensor.Allocate(CPUPlace(), DataTypeOf<T>(), dims);
  if (status.ok() && static_cast<int64_t>(values.size()) == tensor.numel()) {
    for (size_t i = 0; i < values.size(); ++i) {
      tensor.data<T>()[i] = values[i];
    }
  }
  return tensor;
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  const T* data = tensor.data<T>();
  return std::vector<T>(data, data + tensor.numel());
}

// Axis orders for Permute4d: NCHW to NHWC and back.
constexpr std::array<int, 4> kNchwToNhwc = {0, 2, 3, 1};
constexpr std::array<int, 4> kNhwcToNchw = {0, 3, 1, 2};

// The dims of a rank-4 tensor with its axes permuted: axis i of the result
// is axis perm[i] of `dims`.
inline Dims Permute4dDims(const Dims& dims, const std::array<int, 4>& perm) {
  return {dims[perm[0]], dims[perm[1]], dims[perm[2]], dims[perm[3]]};
}

// The rank-4 `x` with its axes permuted as Permute4dDims says, copied.
template <typename T>
Tensor Permute4d(const Tensor& x, const std::array<int, 4>& perm) {
  const Dims& in = x.dims();
  const std::array<int64_t, 4> strides = {in[1] * in[2] * in[3], in[2] * in[3],
                                          in[3], 1};
  const Dims out = Permute4dDims(in, perm);
  std::vector<T> values;
  values.reserve(x.numel());
  const T* data = x.data<T>();
  for (int64_t a = 0; a < out[0]; ++a) {
    for (int64_t b = 0; b < out[1]; ++b) {
      for (int64_t c = 0; c < out[2]; ++c) {
        for (int64_t d = 0; d < out[3]; ++d) {
          values.push_back(data[a * strides[perm[0]] + b * strides[perm[1]] +
                                c * strides[perm[2]] + d * strides[perm[3]]]);
        }
      }
    }
  }
  return MakeTensor<T>(out, values);
}

// Runs the op written in protobuf text format (an OpDef, e.g.
// `type: "relu" inputs { slot: "X" vars: "x" } outputs { slot: "Out" vars:
// "y" }`) on the CPU. Each feed becomes a declared input variable with the
// feed's dtype and shape; returns the `fetches` in order. Prepare's and
// Run's errors come back as they are.
absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op_text, const std::vector<Feed>& feeds,
    const std::vector<std::string>& fetches);

// A declared variable of a one-op test net: `shape` may hold -1s; an empty
// `shape` leaves the rank unknown.
struct VarDecl {
  std::string name;
  DataType dtype = kFloat32;
  std::vector<int64_t> shape;
};

// The net of one block that declares `vars` and holds the op written in
// `op_text`.
absl::StatusOr<NetDef> OneOpNet(const std::string& op_text,
                                const std::vector<VarDecl>& vars);

// `n` values uniform in [-1, 1), the same for the same seed.
std::vector<double> RandomValues(int64_t n, uint32_t seed);
// The same drawn as floats.
std::vector<float> RandomFloats(int64_t n, uint32_t seed);

// The "slot: var" pairs of an op's input or output slots, e.g. "Out: out".
std::vector<std::string> Bindings(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots);

// Each feed declared with its own dtype and shape.
std::vector<VarDecl> DeclareFeeds(const std::vector<Feed>& feeds);

// Prepares the one-op net that declares `vars` and returns what Prepare
// inferred for variable `var`, or Prepare's error.
absl::StatusOr<VarInfo> InferAtPrepare(const std::string& op_text,
                                       const std::vector<VarDecl>& vars,
                                       const std::string& var);

// Runs the op's shape inference alone over `vars`, as a converter that
// infers node by node does, without Prepare's checks of the declared shapes,
// and returns what it infers for `var`, or its error. For what inference
// must reject on its own.
absl::StatusOr<VarInfo> InferAlone(const std::string& op_text,
                                   const std::vector<VarDecl>& vars,
                                   const std::string& var);

// Prepares that net, then runs it with `feeds` and returns the `fetches`.
absl::StatusOr<std::vector<Tensor>> RunDeclared(
    const std::string& op_text, const std::vector<VarDecl>& vars,
    const std::vector<Feed>& feeds, const std::vector<std::string>& fetches);

// Prepares the one-op net RunOp would run and returns Prepare's status.
absl::Status PrepareOp(const std::string& op_text,
                       const std::vector<Feed>& feeds);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_OP_TEST_UTIL_H_
