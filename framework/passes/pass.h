// GraphPass: one rewrite of a block that Prepare runs between validating
// the block as written and preparing what runs. A pass keeps the block's
// computation and makes it cheaper to run (fewer ops, layouts the kernels
// want). PassPipeline (pipeline.h) runs passes in order; prepare.h says
// which run for which PrepareOptions.
//
// To add a pass: one file here with a GraphPass subclass, and one line in
// DefaultPasses (framework/prepare.cc) placing it in the order.
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_PASS_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_PASS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/prepared_net.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// The block the passes rewrite, and where each of its ops comes from.
struct PassBlock {
  // The block as the passes before this one left it.
  BlockDef block;
  // Per op of `block`, the index of the op of the block as written it
  // comes from (for a fused op, the first of the ops fused; for an
  // inserted op, the op it serves): errors name that op.
  std::vector<int> source_op;

  // Replaces `block` by `rewritten`, whose op i comes from op `source[i]`
  // of the block it replaces.
  void Replace(BlockDef rewritten, const std::vector<int>& source);
};

// What a pass knows besides the block.
struct PassContext {
  const Place& place;
  // The block as it is before this pass, prepared: its ops bound to their
  // specs and attributes, its variables' inferred dtypes and shapes.
  const PreparedNet& prepared;
  // The block as written, before any pass: a variable no op of it reads is
  // one the net is run to compute.
  const BlockDef& as_written;
};

// Stateless once constructed: Run may be called from many threads at once.
class GraphPass {
 public:
  virtual ~GraphPass() = default;

  // The name PreparedNet::passes() records ("op_fusion").
  virtual absl::string_view name() const = 0;

  // Rewrites `block` and returns whether it changed it. The result must
  // compute what the block computed; a variable the pass renames or
  // removes makes a run that fetches it run the block as written
  // (PreparedNet::PlanFor). Only temporaries may change. An error fails
  // Prepare (a pass that finds nothing to do returns false instead).
  virtual absl::StatusOr<bool> Run(PassBlock& block,
                                   const PassContext& context) const = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_PASS_H_
