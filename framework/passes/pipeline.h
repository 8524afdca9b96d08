// PassPipeline: Prepare's passes in the order they run, and the running
// of them over a prepared block.
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_PIPELINE_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_PIPELINE_H_

#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/passes/pass.h"
#include "framework/prepared_net.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// Owns its passes. Run is const and thread-safe.
class PassPipeline {
 public:
  PassPipeline& Add(std::unique_ptr<GraphPass> pass) {
    passes_.push_back(std::move(pass));
    return *this;
  }
  bool empty() const { return passes_.empty(); }
  const std::vector<std::unique_ptr<GraphPass>>& passes() const {
    return passes_;
  }

  // Runs the passes in order over block `block` of `net`, which
  // `as_written` is (PrepareAsWritten). Each pass sees the block as the
  // passes before it left it, prepared again after any pass changed it.
  // Returns `as_written` itself where no pass changes the block; otherwise
  // the rewritten block prepared, which records the passes that changed it
  // and keeps `as_written` for runs that fetch what they removed
  // (PreparedNet::passes, PlanFor). A rewritten block that does not
  // prepare is an internal error naming the pass.
  absl::StatusOr<PreparedNet> Run(const NetDef& net, int block,
                                  PreparedNet as_written) const;

 private:
  std::vector<std::unique_ptr<GraphPass>> passes_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_PIPELINE_H_
