#include "operators/control/block_grad.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "framework/backward.h"
#include "framework/block_runner.h"
#include "framework/net_io.h"
#include "framework/op_spec.h"
#include "framework/prepared_net.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

void DeclareLike(BlockDef& block, const std::string& name, const VarInfo& info,
                 bool persistable) {
  VarDef* var = block.add_vars();
  var->set_name(name);
  var->set_dtype(info.dtype);
  if (info.has_dims) {
    for (int64_t d : info.dims) var->add_shape(d);
  }
  var->set_persistable(persistable);
}

const PreparedNet* FindBlock(const PreparedOp& op, absl::string_view attr) {
  for (const auto& [name, block] : op.blocks) {
    if (name == attr) return block.get();
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<BlockGradient> AppendBlockGradient(
    const GradOpContext& context, absl::string_view attr,
    const std::vector<std::string>& targets,
    const std::vector<std::string>& target_grads,
    const std::vector<std::string>& wrt) {
  const OpDef& forward = context.forward();
  SF_CHECK(context.net() != nullptr && context.prepared_forward() != nullptr &&
               context.prepared_block() != nullptr,
           "%s: its gradient is made by AppendGradients, which knows the net",
           forward.type());
  const PreparedNet* prepared = FindBlock(*context.prepared_forward(), attr);
  SF_CHECK(prepared != nullptr, "%s: no prepared block for attribute \"%s\"",
           forward.type(), attr);
  NetDef& net = *context.net();
  const int b = prepared->block_index();
  // What ran: the block as the op's spec rewrites it, if it does.
  BlockDef body = net.blocks(b);
  const OpSpec* spec = OpRegistry::Global().Find(forward.type());
  if (spec != nullptr && spec->block_rewrite() != nullptr) {
    SF_ASSIGN_OR_RETURN(
        body, spec->block_rewrite()(forward, std::string(attr), body));
  }
  for (const OpDef& op : body.ops()) {
    const OpSpec* op_spec = OpRegistry::Global().Find(op.type());
    SF_CHECK(op_spec == nullptr || !op_spec->control_flow(),
             "%s: block %d holds a %s op; differentiating control flow nested "
             "in a block is not supported",
             forward.type(), b, op.type());
  }

  // The body alone as a net, every variable declared with what Prepare
  // inferred, so that AppendGradients can differentiate it.
  NetDef alone;
  alone.set_format_version(kNetFormatVersion);
  alone.set_name(absl::StrFormat("%s block %d", forward.type(), b));
  BlockDef& block = *alone.add_blocks();
  *block.mutable_ops() = body.ops();
  absl::flat_hash_map<std::string, VarInfo> infos;
  for (size_t v = 0; v < prepared->var_names().size(); ++v) {
    infos[prepared->var_names()[v]] = prepared->var_infos()[v];
  }
  for (size_t t = 0; t < targets.size() && t < target_grads.size(); ++t) {
    auto it = infos.find(targets[t]);
    SF_CHECK(it != infos.end(), "%s: block %d does not write \"%s\"",
             forward.type(), b, targets[t]);
    const VarInfo info = it->second;  // Inserting may move the map's values.
    infos[target_grads[t]] = info;
  }
  for (const auto& [name, info] : infos) {
    DeclareLike(block, name, info, /*persistable=*/false);
  }
  SF_ASSIGN_OR_RETURN(std::vector<VarGrad> grads,
                      AppendGradients(alone, targets, target_grads, wrt));

  // The gradient ops, in a new block under the forward op's block.
  const int g = net.blocks_size();
  BlockDef& grad_block = *net.add_blocks();
  grad_block.set_parent_idx(context.block());
  absl::flat_hash_set<std::string> written;
  absl::flat_hash_set<std::string> read;
  for (int i = body.ops_size(); i < alone.blocks(0).ops_size(); ++i) {
    const OpDef& op = alone.blocks(0).ops(i);
    *grad_block.add_ops() = op;
    for (const OpSlot& slot : op.inputs()) {
      read.insert(slot.vars().begin(), slot.vars().end());
    }
    for (const OpSlot& slot : op.outputs()) {
      written.insert(slot.vars().begin(), slot.vars().end());
    }
  }
  const PreparedNet& enclosing = *context.prepared_block();
  for (const std::string& name : read) {
    if (written.contains(name)) continue;
    const int v = prepared->VarIndex(name);
    if (v >= 0 && prepared->is_external(v)) continue;  // Found outside.
    auto info = infos.find(name);
    if (v >= 0) {
      // A value of the forward block, kept in its scope.
      DeclareLike(grad_block, name, info->second, /*persistable=*/true);
    } else if (enclosing.VarIndex(name) < 0 && info != infos.end()) {
      // A target gradient to feed.
      DeclareLike(grad_block, name, info->second, /*persistable=*/false);
    }
  }
  for (const std::string& name : written) {
    VarDef* var = grad_block.add_vars();
    var->set_name(name);
  }
  BlockGradient result;
  result.block = g;
  for (const VarGrad& grad : grads) result.grads.push_back(grad.grad);
  return result;
}

}  // namespace scopeflow
