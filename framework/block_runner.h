// What a control-flow op's kernel needs of the executor running it: a way
// to run one of the op's prepared blocks against a scope. The executor
// implements it; operators see only this interface, so operator libraries
// do not depend on the executor.
#ifndef SCOPEFLOW_FRAMEWORK_BLOCK_RUNNER_H_
#define SCOPEFLOW_FRAMEWORK_BLOCK_RUNNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/tensor.h"

namespace scopeflow {

class PreparedNet;
class Scope;

// A tensor fed to a run under a variable's name.
struct Feed {
  std::string name;
  Tensor tensor;
};

// Runs prepared blocks. Implementations are thread-safe: many runs may use
// one runner at once (the Executor is one).
class BlockRunner {
 public:
  virtual ~BlockRunner() = default;

  // Runs `prepared` once with its temporaries in a run scope under `scope`
  // (Executor::Run); returns the fetched tensors in the order asked.
  virtual absl::StatusOr<std::vector<Tensor>> Run(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches) const = 0;

  // Runs `prepared` with its temporaries as local variables of `scope`
  // itself, kept after the run (Executor::RunInScope).
  virtual absl::StatusOr<std::vector<Tensor>> RunInScope(
      const PreparedNet& prepared, Scope& scope, absl::Span<const Feed> feeds,
      absl::Span<const std::string> fetches) const = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_BLOCK_RUNNER_H_
