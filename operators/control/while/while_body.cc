#include "operators/control/while/while_body.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/op_spec.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

std::vector<std::string> SlotVars(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots,
    const std::string& name) {
  for (const OpSlot& slot : slots) {
    if (slot.slot() == name) return {slot.vars().begin(), slot.vars().end()};
  }
  return {};
}

}  // namespace

std::string VersionName(const std::string& name, int k) {
  return absl::StrCat(name, "@V", k);
}

std::string LastVersion(const PreparedNet& body, const std::string& name) {
  std::string last;
  for (int k = 1;; ++k) {
    std::string version = VersionName(name, k);
    if (body.VarIndex(version) < 0) return last;
    last = std::move(version);
  }
}

absl::StatusOr<CarriedBody> RenameCarried(const OpDef& op,
                                          const BlockDef& block) {
  const std::vector<std::string> outs = SlotVars(op.outputs(), "Out");
  const std::vector<std::string> cond = SlotVars(op.inputs(), "Condition");
  absl::flat_hash_set<std::string> declared;
  for (const VarDef& var : block.vars()) declared.insert(var.name());
  // A name the body declares is its own local, not the carried variable.
  absl::flat_hash_map<std::string, int> versions;
  for (const std::string& name : outs) {
    if (!declared.contains(name)) versions[name] = 0;
  }
  auto current = [&](const std::string& name) {
    const int k = versions.at(name);
    return k == 0 ? name : VersionName(name, k);
  };

  CarriedBody result;
  result.block = block;
  for (int i = 0; i < result.block.ops_size(); ++i) {
    OpDef& body_op = *result.block.mutable_ops(i);
    const OpSpec* spec = OpRegistry::Global().Find(body_op.type());
    if (spec != nullptr && spec->control_flow()) {
      // Its block finds carried variables by name, so it cannot follow a
      // renaming: it may only read values the iteration started with.
      for (const OpSlot& slot : body_op.outputs()) {
        for (const std::string& var : slot.vars()) {
          SF_CHECK(!versions.contains(var),
                   "op %d (%s) of the body writes carried variable \"%s\" "
                   "through its own block, which a while loop does not "
                   "support: let it write a variable of the body and assign "
                   "that to \"%s\"",
                   i, body_op.type(), var, var);
        }
      }
      for (const OpSlot& slot : body_op.inputs()) {
        for (const std::string& var : slot.vars()) {
          SF_CHECK(!versions.contains(var) || versions.at(var) == 0,
                   "op %d (%s) of the body reads carried variable \"%s\" "
                   "after the body wrote it, but its own block would read the "
                   "value the iteration started with: pass it a copy in a "
                   "variable of the body",
                   i, body_op.type(), var);
        }
      }
      continue;
    }
    for (OpSlot& slot : *body_op.mutable_inputs()) {
      for (std::string& var : *slot.mutable_vars()) {
        if (versions.contains(var)) var = current(var);
      }
    }
    for (OpSlot& slot : *body_op.mutable_outputs()) {
      for (std::string& var : *slot.mutable_vars()) {
        if (!versions.contains(var)) continue;
        const std::string name = var;
        var = VersionName(name, ++versions[name]);
      }
    }
  }
  if (!cond.empty()) {
    SF_CHECK(versions.contains(cond[0]) && versions.at(cond[0]) > 0,
             "the body never writes the condition variable \"%s\" (input "
             "\"Condition\") of the enclosing block, so the loop could not "
             "end",
             cond[0]);
  }
  for (const std::string& name : outs) {
    auto it = versions.find(name);
    result.last.push_back(it == versions.end() || it->second == 0
                              ? ""
                              : VersionName(name, it->second));
  }
  return result;
}

}  // namespace scopeflow
