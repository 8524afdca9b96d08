#include "framework/onnx/constant_folding.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "framework/op_def_attrs.h"
#include "framework/op_spec.h"
#include "framework/prepare_block.h"
#include "platform/place.h"

namespace scopeflow {
namespace onnx_import {
namespace {

int64_t Bytes(const VarInfo& info) {
  int64_t elements = 1;
  for (int64_t d : info.dims) elements *= d;
  return elements * static_cast<int64_t>(SizeOf(info.dtype));
}

bool FullyKnown(const VarInfo& info) {
  return info.has_dims && info.dtype != DATA_TYPE_UNSPECIFIED &&
         std::all_of(info.dims.begin(), info.dims.end(),
                     [](int64_t d) { return d >= 0; });
}

// The variable bound to `slot` where it holds exactly one, else null.
const std::string* OnlyVar(
    const google::protobuf::RepeatedPtrField<OpSlot>& slots,
    absl::string_view slot) {
  for (const OpSlot& bound : slots) {
    if (bound.slot() == slot) {
      return bound.vars_size() == 1 ? &bound.vars(0) : nullptr;
    }
  }
  return nullptr;
}

// `values` as an int64 tensor of `dims`.
Tensor Int64Tensor(const Dims& dims, const std::vector<int64_t>& values) {
  Tensor tensor;
  if (!tensor.Allocate(CPUPlace(), kInt64, dims).ok()) return Tensor();
  std::copy(values.begin(), values.end(), tensor.data<int64_t>());
  return tensor;
}

}  // namespace

std::optional<NamedTensor> FoldDims(const OpDef& op,
                                    const ConstantLookup& constant,
                                    const InfoLookup& info,
                                    DimsValues& dims_values) {
  const std::string* x = OnlyVar(op.inputs(), "X");
  const std::string* out = OnlyVar(op.outputs(), "Out");
  if (x == nullptr || out == nullptr || op.outputs_size() != 1) {
    return std::nullopt;
  }
  std::vector<int64_t> values;
  Dims dims;
  if (op.type() == "shape" && op.inputs_size() == 1) {
    const VarInfo x_info = info(*x);
    if (!x_info.has_dims) return std::nullopt;
    values.assign(x_info.dims.begin(), x_info.dims.end());
    dims = {static_cast<int64_t>(values.size())};
  } else if (op.type() == "size" && op.inputs_size() == 1) {
    const VarInfo x_info = info(*x);
    if (!x_info.has_dims) return std::nullopt;
    int64_t count = 1;
    for (int64_t d : x_info.dims) {
      if (d < 0) return std::nullopt;
      count *= d;
    }
    values = {count};
  } else if (op.type() == "gather" && dims_values.contains(*x)) {
    const std::string* index = OnlyVar(op.inputs(), "Index");
    const Tensor* index_value = index ? constant(*index) : nullptr;
    const AttrDef* axis = FindAttr(op, "axis");
    if (index_value == nullptr || (axis != nullptr && axis->i() != 0) ||
        (index_value->dtype() != kInt64 && index_value->dtype() != kInt32)) {
      return std::nullopt;
    }
    const std::vector<int64_t>& from = dims_values.at(*x);
    const int64_t n = static_cast<int64_t>(from.size());
    for (int64_t i = 0; i < index_value->numel(); ++i) {
      int64_t at = index_value->dtype() == kInt64
                       ? index_value->data<int64_t>()[i]
                       : index_value->data<int32_t>()[i];
      if (at < 0) at += n;
      // Out of range: the kernel's error is for the run to report.
      if (at < 0 || at >= n) return std::nullopt;
      values.push_back(from[at]);
    }
    dims = index_value->dims();
  } else {
    return std::nullopt;
  }
  if (std::any_of(values.begin(), values.end(),
                  [](int64_t d) { return d < 0; })) {
    if (dims.size() == 1) dims_values[*out] = std::move(values);
    return std::nullopt;
  }
  return NamedTensor{*out, Int64Tensor(dims, values)};
}

absl::StatusOr<std::optional<std::vector<NamedTensor>>> FoldOp(
    const OpDef& op, const ConstantLookup& constant, const InfoLookup& info) {
  const OpSpec* spec = OpRegistry::Global().Find(op.type());
  if (spec == nullptr || !spec->pure()) return std::nullopt;
  // A copy of a constant (an Identity, as torch writes a weight that two
  // layers share) would be stored twice; run, it costs one copy.
  if (op.type() == "assign") return std::nullopt;
  for (const AttrDef& attr : op.attrs()) {
    // An op running a block of the net is no op to run alone.
    if (attr.has_block_idx()) return std::nullopt;
  }
  std::vector<Feed> feeds;
  absl::flat_hash_set<std::string> fed;
  int64_t input_bytes = 0;
  for (const OpSlot& slot : op.inputs()) {
    for (const std::string& var : slot.vars()) {
      const Tensor* value = constant(var);
      if (value == nullptr) return std::nullopt;
      if (!fed.insert(var).second) continue;
      input_bytes += static_cast<int64_t>(value->nbytes());
      feeds.push_back({var, *value});
    }
  }
  std::vector<std::string> outputs;
  int64_t output_bytes = 0;
  for (const OpSlot& slot : op.outputs()) {
    for (const std::string& var : slot.vars()) {
      // An op writing what it reads updates it: not a value of its own.
      if (fed.contains(var)) return std::nullopt;
      const VarInfo out = info(var);
      if (!FullyKnown(out)) return std::nullopt;
      output_bytes += Bytes(out);
      outputs.push_back(var);
    }
  }
  if (outputs.empty() ||
      output_bytes > std::max(2 * input_bytes, kMaxFoldedGrowthBytes)) {
    return std::nullopt;
  }

  NetDef net;
  net.set_format_version(kNetFormatVersion);
  net.set_name(absl::StrFormat("folding %s", op.type()));
  BlockDef* block = net.add_blocks();
  for (const Feed& feed : feeds) {
    VarDef* var = block->add_vars();
    var->set_name(feed.name);
    var->set_kind(VAR_KIND_DENSE_TENSOR);
    var->set_dtype(feed.tensor.dtype());
    for (int64_t d : feed.tensor.dims()) var->add_shape(d);
  }
  *block->add_ops() = op;
  absl::StatusOr<PreparedNet> prepared = PrepareAsWritten(net, 0, CPUPlace());
  // The converter checked the op as Prepare would, with what inference
  // knew; an op that the CPU cannot run alone is left to the net.
  if (!prepared.ok()) return std::nullopt;
  Scope scope;
  absl::StatusOr<std::vector<Tensor>> values =
      Executor().Run(*prepared, scope, feeds, outputs);
  if (!values.ok()) {
    return absl::Status(
        values.status().code(),
        absl::StrFormat("folding the constant %s op writing \"%s\": %s",
                        op.type(), outputs[0], values.status().message()));
  }
  std::vector<NamedTensor> folded;
  for (size_t i = 0; i < outputs.size(); ++i) {
    folded.push_back({outputs[i], std::move((*values)[i])});
  }
  return folded;
}

void RemoveUnreadOps(const absl::flat_hash_set<std::string>& outputs,
                     BlockDef& block, std::vector<NamedTensor>& params) {
  absl::flat_hash_map<std::string, int> readers;
  for (const OpDef& op : block.ops()) {
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) ++readers[var];
    }
  }
  std::vector<bool> alive(block.ops_size(), true);
  absl::flat_hash_set<std::string> removed_outputs;
  for (int i = block.ops_size() - 1; i >= 0; --i) {
    const OpDef& op = block.ops(i);
    const OpSpec* spec = OpRegistry::Global().Find(op.type());
    bool unread = spec != nullptr && spec->pure() && op.outputs_size() > 0;
    for (const AttrDef& attr : op.attrs()) {
      unread = unread && !attr.has_block_idx();
    }
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) {
        unread = unread && !outputs.contains(var) && readers[var] == 0;
      }
    }
    if (!unread) continue;
    alive[i] = false;
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) --readers[var];
    }
    for (const OpSlot& slot : op.outputs()) {
      removed_outputs.insert(slot.vars().begin(), slot.vars().end());
    }
  }
  // Parameters that only removed ops read; fed inputs stay declared.
  absl::flat_hash_set<std::string> unused_params;
  for (const VarDef& var : block.vars()) {
    if (var.persistable() && readers[var.name()] == 0 &&
        !outputs.contains(var.name())) {
      unused_params.insert(var.name());
    }
  }
  BlockDef kept = block;
  kept.clear_ops();
  kept.clear_vars();
  for (int i = 0; i < block.ops_size(); ++i) {
    if (alive[i]) *kept.add_ops() = block.ops(i);
  }
  for (const VarDef& var : block.vars()) {
    if (!unused_params.contains(var.name()) &&
        !removed_outputs.contains(var.name())) {
      *kept.add_vars() = var;
    }
  }
  block = std::move(kept);
  params.erase(std::remove_if(params.begin(), params.end(),
                              [&](const NamedTensor& param) {
                                return unused_params.contains(param.name);
                              }),
               params.end());
}

}  // namespace onnx_import
}  // namespace scopeflow
