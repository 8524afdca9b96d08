// Test helpers beyond framework/op_test_util.h: one-op nets whose input
// variables are declared with unknown dims (-1) or unknown rank, to check
// what inference makes of them at Prepare.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_SHAPE_TEST_UTIL_H_
#define SCOPEFLOW_OPERATORS_SHAPE_SHAPE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/op_context.h"

namespace scopeflow {

// A variable of the net: `shape` may hold -1s; an empty `shape` leaves the
// rank unknown (a net cannot declare a rank-0 variable).
struct VarDecl {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
};

// Prepares the one-op net (op in protobuf text format) that declares `vars`
// and returns what Prepare inferred for variable `var`, or Prepare's error.
absl::StatusOr<VarInfo> InferAtPrepare(const std::string& op_text,
                                       const std::vector<VarDecl>& vars,
                                       const std::string& var);

// Prepares that net, then runs it with `feeds` and returns the `fetches`.
absl::StatusOr<std::vector<Tensor>> RunDeclared(
    const std::string& op_text, const std::vector<VarDecl>& vars,
    const std::vector<Feed>& feeds, const std::vector<std::string>& fetches);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_SHAPE_TEST_UTIL_H_
