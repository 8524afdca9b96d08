// The body of a while loop as the op prepares it. The body reads and writes
// the carried variables (the op's outputs "Out") by their own names; so that
// each variable of the prepared body is written once (as the gradient needs)
// and every iteration reads the values it started with, each write of a
// carried variable c is renamed to a new local version (c@V1, c@V2, ...;
// later reads use the latest) and the op copies the last version out to c
// after the iteration.
#ifndef SCOPEFLOW_OPERATORS_CONTROL_WHILE_WHILE_BODY_H_
#define SCOPEFLOW_OPERATORS_CONTROL_WHILE_WHILE_BODY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/block_runner.h"
#include "framework/prepared_net.h"
#include "proto/framework.pb.h"

namespace scopeflow {

struct CarriedBody {
  BlockDef block;
  // Per variable of the op's "Out": the name of its last version in
  // `block`, or "" where the body does not write it.
  std::vector<std::string> last;
};

// Renames the body's writes of the carried variables of while op `op`.
// Errors: the body never writes the condition variable (the loop could not
// end), or an op of the body that runs a block of its own (a nested loop)
// writes a carried variable, or reads one after the body wrote it (its
// block would see the value the iteration started with).
absl::StatusOr<CarriedBody> RenameCarried(const OpDef& op,
                                          const BlockDef& block);

// The name of the k-th version (k >= 1) of carried variable `name`.
std::string VersionName(const std::string& name, int k);

// The last version of carried variable `name` that the prepared body
// writes, or "" if it writes none.
std::string LastVersion(const PreparedNet& body, const std::string& name);

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_WHILE_WHILE_BODY_H_
