// Test helper for ops whose inputs a net declares with unknown dimensions.
#ifndef SCOPEFLOW_OPERATORS_NN_NN_TEST_UTIL_H_
#define SCOPEFLOW_OPERATORS_NN_NN_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

namespace scopeflow {

// An input variable as a net declares it: `dims` may hold -1 (unknown);
// without `has_dims` not even the rank is known.
struct DeclaredVar {
  std::string name;
  DataType dtype = kFloat32;
  Dims dims;
  bool has_dims = true;
};

// Prepares a one-op net (the op in protobuf text format, as for RunOp) whose
// inputs are declared as `vars`, and returns what Prepare inferred for the
// variable `var`, or Prepare's error.
absl::StatusOr<VarInfo> InferAtPrepare(const std::string& op_text,
                                       const std::vector<DeclaredVar>& vars,
                                       const std::string& var);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_NN_TEST_UTIL_H_
