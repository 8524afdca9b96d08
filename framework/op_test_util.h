// Helpers for operator tests: build tensors and run one op through the
// executor, as a net would.
#ifndef SCOPEFLOW_FRAMEWORK_OP_TEST_UTIL_H_
#define SCOPEFLOW_FRAMEWORK_OP_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/tensor.h"

namespace scopeflow {

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
