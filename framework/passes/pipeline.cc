#include "framework/passes/pipeline.h"

#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/prepare_block.h"
#include "platform/status_macros.h"

namespace scopeflow {

void PassBlock::Replace(BlockDef rewritten, const std::vector<int>& source) {
  std::vector<int> composed(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    composed[i] = source_op[source[i]];
  }
  block = std::move(rewritten);
  source_op = std::move(composed);
}

namespace {

// `net` with block `block` replaced by what `pass` left, prepared.
absl::StatusOr<PreparedNet> PrepareRewritten(const NetDef& net, int block,
                                             const BlockDef& rewritten,
                                             const Place& place,
                                             const std::string& pass) {
  NetDef changed = net;
  *changed.mutable_blocks(block) = rewritten;
  absl::StatusOr<PreparedNet> prepared =
      PrepareAsWritten(changed, block, place);
  SF_CHECK_CODE(prepared.ok(), absl::StatusCode::kInternal,
                "pass \"%s\" rewrote net \"%s\" block %d into one that does "
                "not prepare (PrepareOptions::AsWritten() runs no pass): %s",
                pass, net.name(), block, prepared.status().message());
  return prepared;
}

}  // namespace

absl::StatusOr<PreparedNet> PassPipeline::Run(const NetDef& net, int block,
                                              PreparedNet as_written) const {
  if (passes_.empty()) return as_written;
  const Place place = as_written.place();
  PassBlock current;
  current.block = net.blocks(block);
  current.source_op.resize(current.block.ops_size());
  std::iota(current.source_op.begin(), current.source_op.end(), 0);
  // `current` prepared, once a pass has changed it.
  std::optional<PreparedNet> prepared;
  std::vector<std::string> changed_by;
  bool stale = false;  // `prepared` is of a block before the last change
  for (const std::unique_ptr<GraphPass>& pass : passes_) {
    if (stale) {
      SF_ASSIGN_OR_RETURN(prepared, PrepareRewritten(net, block, current.block,
                                                     place, changed_by.back()));
      stale = false;
    }
    const PassContext context{place, prepared ? *prepared : as_written,
                              net.blocks(block)};
    absl::StatusOr<bool> changed = pass->Run(current, context);
    if (!changed.ok()) {
      return absl::Status(
          changed.status().code(),
          absl::StrCat("pass \"", pass->name(), "\" on net \"", net.name(),
                       "\" block ", block, ": ", changed.status().message()));
    }
    if (*changed) {
      changed_by.emplace_back(pass->name());
      stale = true;
    }
  }
  if (changed_by.empty()) return as_written;
  if (stale) {
    SF_ASSIGN_OR_RETURN(prepared, PrepareRewritten(net, block, current.block,
                                                   place, changed_by.back()));
  }
  // Errors name the op of the net as written.
  const BlockDef& written = net.blocks(block);
  for (PreparedOp& op : prepared->ops_) {
    op.index = current.source_op[op.index];
    const std::string& type = written.ops(op.index).type();
    if (type != op.spec->type()) op.written_type = type;
  }
  prepared->as_written_ =
      std::make_shared<const PreparedNet>(std::move(as_written));
  prepared->passes_ = std::move(changed_by);
  // Its ops are not the block's as written: plans of its own.
  prepared->memory_plans_ = std::make_shared<MemoryPlanCache>();
  return std::move(*prepared);
}

}  // namespace scopeflow
