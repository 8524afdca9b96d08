#include "framework/onnx/import_context.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/attribute.h"
#include "framework/onnx/onnx_tensor.h"
#include "framework/op_spec.h"
#include "platform/place.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

const char* AttrTypeWord(onnx::AttributeProto::AttributeType type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT:
      return "a float";
    case onnx::AttributeProto::INT:
      return "an int";
    case onnx::AttributeProto::STRING:
      return "a string";
    case onnx::AttributeProto::TENSOR:
      return "a tensor";
    case onnx::AttributeProto::FLOATS:
      return "a list of floats";
    case onnx::AttributeProto::INTS:
      return "a list of ints";
    default:
      return onnx::AttributeProto::AttributeType_Name(type).c_str();
  }
}

// The attribute's type; models written before the `type` field existed
// (IR version 1) say it only by the field they set.
onnx::AttributeProto::AttributeType TypeOfAttr(
    const onnx::AttributeProto& attr) {
  if (attr.type() != onnx::AttributeProto::UNDEFINED) return attr.type();
  if (attr.has_f()) return onnx::AttributeProto::FLOAT;
  if (attr.has_i()) return onnx::AttributeProto::INT;
  if (attr.has_s()) return onnx::AttributeProto::STRING;
  if (attr.has_t()) return onnx::AttributeProto::TENSOR;
  if (attr.has_g()) return onnx::AttributeProto::GRAPH;
  if (attr.floats_size() > 0) return onnx::AttributeProto::FLOATS;
  if (attr.ints_size() > 0) return onnx::AttributeProto::INTS;
  if (attr.strings_size() > 0) return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}

}  // namespace

OpBuilder::OpBuilder(std::string type) { def_.set_type(std::move(type)); }

OpBuilder& OpBuilder::In(const std::string& slot, const std::string& var) {
  return In(slot, std::vector<std::string>{var});
}

OpBuilder& OpBuilder::In(const std::string& slot,
                         const std::vector<std::string>& vars) {
  OpSlot* s = def_.add_inputs();
  s->set_slot(slot);
  for (const std::string& var : vars) s->add_vars(var);
  return *this;
}

OpBuilder& OpBuilder::Out(const std::string& slot, const std::string& var) {
  return Out(slot, std::vector<std::string>{var});
}

OpBuilder& OpBuilder::Out(const std::string& slot,
                          const std::vector<std::string>& vars) {
  OpSlot* s = def_.add_outputs();
  s->set_slot(slot);
  for (const std::string& var : vars) s->add_vars(var);
  return *this;
}

AttrDef* OpBuilder::AddAttr(const std::string& name) {
  AttrDef* attr = def_.add_attrs();
  attr->set_name(name);
  return attr;
}

OpBuilder& OpBuilder::Attr(const std::string& name, int32_t value) {
  AddAttr(name)->set_i(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name, int64_t value) {
  AddAttr(name)->set_i64(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name, float value) {
  AddAttr(name)->set_f(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name,
                           const std::vector<std::string>& value) {
  AttrDef* attr = AddAttr(name);
  for (const std::string& v : value) attr->mutable_strings()->add_values(v);
  return *this;
}

OpBuilder& OpBuilder::BlockAttr(const std::string& name, int32_t block_index) {
  AddAttr(name)->set_block_idx(block_index);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name, bool value) {
  AddAttr(name)->set_b(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name, const std::string& value) {
  AddAttr(name)->set_s(value);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name,
                           const std::vector<int32_t>& value) {
  AttrDef* attr = AddAttr(name);
  attr->mutable_ints();  // Sets the oneof even for an empty list.
  for (int32_t v : value) attr->mutable_ints()->add_values(v);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name,
                           const std::vector<int64_t>& value) {
  AttrDef* attr = AddAttr(name);
  attr->mutable_i64s();
  for (int64_t v : value) attr->mutable_i64s()->add_values(v);
  return *this;
}

OpBuilder& OpBuilder::Attr(const std::string& name,
                           const std::vector<float>& value) {
  AttrDef* attr = AddAttr(name);
  attr->mutable_floats();
  for (float v : value) attr->mutable_floats()->add_values(v);
  return *this;
}

VarInfo InfoOf(const Tensor& tensor) {
  return VarInfo{tensor.dtype(), tensor.dims(), true};
}

VarInfo InfoFromOnnxType(const onnx::TypeProto& type) {
  VarInfo info;
  if (!type.has_tensor_type()) return info;
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  absl::StatusOr<DataType> dtype = DataTypeFromOnnx(tensor.elem_type());
  if (dtype.ok()) info.dtype = *dtype;
  if (tensor.has_shape()) {
    info.has_dims = true;
    for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
      info.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
  }
  return info;
}

void SetDimNames(const onnx::TypeProto& type, VarDef& var) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
  const auto& dims = type.tensor_type().shape().dim();
  if (absl::c_none_of(dims, [](const onnx::TensorShapeProto::Dimension& d) {
        return !d.has_dim_value() && !d.dim_param().empty();
      })) {
    return;
  }
  for (const onnx::TensorShapeProto::Dimension& dim : dims) {
    var.add_dim_names(dim.has_dim_value() ? "" : dim.dim_param());
  }
}

void DeclareParam(GraphState& state, const std::string& name,
                  const Tensor& value) {
  GraphState* root = &state;
  while (root->outer != nullptr) root = root->outer;
  if (!root->infos.contains(name)) {
    VarDef* var = root->block->add_vars();
    var->set_name(name);
    var->set_kind(VAR_KIND_DENSE_TENSOR);
    var->set_dtype(value.dtype());
    for (int64_t d : value.dims()) var->add_shape(d);
    var->set_persistable(true);
    root->params.push_back({name, value});
  }
  for (GraphState* s = &state; s != nullptr; s = s->outer) {
    s->infos[name] = InfoOf(value);
  }
}

NodeContext::NodeContext(GraphState& state, const onnx::NodeProto& node)
    : state_(state), node_(node) {}

bool NodeContext::HasInput(int i) const {
  return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
}

const std::string& NodeContext::InputName(int i) const {
  return i >= 0 && i < node_.input_size() ? node_.input(i) : empty_;
}

bool NodeContext::IsConstant(int i) const {
  return HasInput(i) && state_.constants.contains(InputName(i));
}

absl::StatusOr<std::string> NodeContext::Input(int i) {
  SF_CHECK(HasInput(i), "input %d is required", i);
  const std::string& name = InputName(i);
  auto bad = state_.bad_constants.find(name);
  if (bad != state_.bad_constants.end()) return bad->second;
  auto constant = state_.constants.find(name);
  const bool materialized = state_.infos.contains(name) ||
                            std::find(new_params_.begin(), new_params_.end(),
                                      name) != new_params_.end();
  if (constant != state_.constants.end() && !materialized) {
    new_params_.push_back(name);
  }
  return name;
}

VarInfo NodeContext::InputInfo(int i) const {
  if (!HasInput(i)) return VarInfo{};
  return Info(InputName(i));
}

absl::Status NodeContext::RequireConstants(const std::vector<int>& inputs,
                                           absl::string_view why) {
  std::vector<std::string> not_constant;
  for (int i : inputs) {
    if (!HasInput(i)) continue;
    const std::string& name = InputName(i);
    if (state_.constants.contains(name) ||
        state_.bad_constants.contains(name)) {
      continue;
    }
    if (state_.fed_inputs.contains(name)) {
      auto& needed = state_.inputs_needed_as_constants;
      if (std::find(needed.begin(), needed.end(), name) == needed.end()) {
        needed.push_back(name);
      }
      not_constant.push_back(absl::StrFormat(
          "input %d (\"%s\") is a graph input fed at run time", i, name));
    } else {
      not_constant.push_back(absl::StrFormat(
          "input %d (\"%s\") is computed at run time", i, name));
    }
  }
  if (not_constant.empty()) return absl::OkStatus();
  return Unsupported(absl::StrFormat(
      "%s must be constant (an initializer or a Constant node's output) "
      "because %s, but %s",
      not_constant.size() > 1 ? "these inputs" : "this input", why,
      absl::StrJoin(not_constant, ", ")));
}

absl::StatusOr<const Tensor*> NodeContext::ConstantInput(
    int i, absl::string_view why) {
  SF_CHECK(HasInput(i), "input %d is required", i);
  SF_RETURN_IF_ERROR(RequireConstants({i}, why));
  const std::string& name = InputName(i);
  auto bad = state_.bad_constants.find(name);
  if (bad != state_.bad_constants.end()) return bad->second;
  return &state_.constants.at(name);
}

absl::StatusOr<std::vector<int64_t>> NodeContext::ConstantInts(
    int i, absl::string_view why) {
  SF_ASSIGN_OR_RETURN(const Tensor* value, ConstantInput(i, why));
  return TensorToInt64s(*value,
                        absl::StrFormat("input %d (\"%s\")", i, InputName(i)));
}

absl::StatusOr<double> NodeContext::ConstantScalar(int i,
                                                   absl::string_view why) {
  SF_ASSIGN_OR_RETURN(const Tensor* value, ConstantInput(i, why));
  return TensorToScalar(*value,
                        absl::StrFormat("input %d (\"%s\")", i, InputName(i)));
}

bool NodeContext::HasOutput(int i) const {
  return i >= 0 && i < node_.output_size() && !node_.output(i).empty();
}

const std::string& NodeContext::Output(int i) const {
  // An output the node does not list is absent, as an empty name is in
  // ONNX; reading past the list would abort inside protobuf.
  static const std::string kAbsent;
  return HasOutput(i) ? node_.output(i) : kAbsent;
}

const SequenceValue* NodeContext::Sequence(const std::string& name) const {
  auto it = state_.sequences.find(name);
  return it == state_.sequences.end() ? nullptr : &it->second;
}

void NodeContext::SetSequenceOutput(int i, SequenceValue value) {
  new_sequences_[Output(i)] = std::move(value);
}

void NodeContext::SetConstantOutput(int i, Tensor value) {
  new_constants_[Output(i)] = std::move(value);
}

std::string NodeContext::AddConstant(absl::string_view hint, Tensor value) {
  std::string name = Temp(hint);
  new_constants_[name] = std::move(value);
  new_params_.push_back(name);
  return name;
}

bool NodeContext::HasAttr(absl::string_view name) const {
  return FindAttr(name) != nullptr;
}

const onnx::AttributeProto* NodeContext::FindAttr(
    absl::string_view name) const {
  for (const onnx::AttributeProto& attr : node_.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

const onnx::AttributeProto* NodeContext::Attr(absl::string_view name) {
  read_attrs_.insert(std::string(name));
  return FindAttr(name);
}

void NodeContext::IgnoreAttr(absl::string_view name) {
  read_attrs_.insert(std::string(name));
}

absl::StatusOr<const onnx::AttributeProto*> NodeContext::TypedAttr(
    absl::string_view name, onnx::AttributeProto::AttributeType type) {
  const onnx::AttributeProto* attr = Attr(name);
  if (attr == nullptr) return nullptr;
  SF_CHECK(attr->ref_attr_name().empty(),
           "attribute \"%s\" refers to a function attribute (\"%s\"); "
           "expected a value",
           name, attr->ref_attr_name());
  const onnx::AttributeProto::AttributeType actual = TypeOfAttr(*attr);
  // An empty list carries no field to tell INTS from FLOATS.
  const bool empty_list = actual == onnx::AttributeProto::UNDEFINED &&
                          (type == onnx::AttributeProto::INTS ||
                           type == onnx::AttributeProto::FLOATS);
  SF_CHECK(actual == type || empty_list, "attribute \"%s\" is %s: expected %s",
           name, AttrTypeWord(actual), AttrTypeWord(type));
  return attr;
}

absl::StatusOr<int64_t> NodeContext::IntAttr(
    absl::string_view name, std::optional<int64_t> default_value) {
  SF_ASSIGN_OR_RETURN(const onnx::AttributeProto* attr,
                      TypedAttr(name, onnx::AttributeProto::INT));
  if (attr != nullptr) return attr->i();
  SF_CHECK(default_value.has_value(), "missing required attribute \"%s\"",
           name);
  return *default_value;
}

absl::StatusOr<float> NodeContext::FloatAttr(
    absl::string_view name, std::optional<float> default_value) {
  SF_ASSIGN_OR_RETURN(const onnx::AttributeProto* attr,
                      TypedAttr(name, onnx::AttributeProto::FLOAT));
  if (attr != nullptr) return attr->f();
  SF_CHECK(default_value.has_value(), "missing required attribute \"%s\"",
           name);
  return *default_value;
}

absl::StatusOr<std::string> NodeContext::StringAttr(
    absl::string_view name, std::optional<std::string> default_value) {
  SF_ASSIGN_OR_RETURN(const onnx::AttributeProto* attr,
                      TypedAttr(name, onnx::AttributeProto::STRING));
  if (attr != nullptr) return attr->s();
  SF_CHECK(default_value.has_value(), "missing required attribute \"%s\"",
           name);
  return *std::move(default_value);
}

absl::StatusOr<std::vector<int64_t>> NodeContext::IntsAttr(
    absl::string_view name, std::optional<std::vector<int64_t>> default_value) {
  SF_ASSIGN_OR_RETURN(const onnx::AttributeProto* attr,
                      TypedAttr(name, onnx::AttributeProto::INTS));
  if (attr != nullptr) {
    return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
  }
  SF_CHECK(default_value.has_value(), "missing required attribute \"%s\"",
           name);
  return *std::move(default_value);
}

absl::StatusOr<std::vector<float>> NodeContext::FloatsAttr(
    absl::string_view name, std::optional<std::vector<float>> default_value) {
  SF_ASSIGN_OR_RETURN(const onnx::AttributeProto* attr,
                      TypedAttr(name, onnx::AttributeProto::FLOATS));
  if (attr != nullptr) {
    return std::vector<float>(attr->floats().begin(), attr->floats().end());
  }
  SF_CHECK(default_value.has_value(), "missing required attribute \"%s\"",
           name);
  return *std::move(default_value);
}

std::vector<std::string> NodeContext::UnreadAttrs() const {
  std::vector<std::string> unread;
  for (const onnx::AttributeProto& attr : node_.attribute()) {
    if (!read_attrs_.contains(attr.name())) unread.push_back(attr.name());
  }
  std::sort(unread.begin(), unread.end());
  return unread;
}

std::string NodeContext::Temp(absl::string_view hint) {
  std::string base;
  for (const std::string& output : node_.output()) {
    if (!output.empty()) {
      base = output;
      break;
    }
  }
  if (base.empty()) base = node_.op_type();
  const std::string stem = absl::StrCat(base, "/", hint);
  std::string name = stem;
  for (int n = 1; state_.used_names.contains(name); ++n) {
    name = absl::StrCat(stem, "_", n);
  }
  state_.used_names.insert(name);
  return name;
}

bool NodeContext::Known(const std::string& var) const {
  return infos_.contains(var) || state_.infos.contains(var) ||
         state_.constants.contains(var) || new_constants_.contains(var) ||
         Tainted(var);
}

bool NodeContext::Tainted(const std::string& var) const {
  return tainted_.contains(var) || state_.tainted.contains(var);
}

VarInfo NodeContext::Info(const std::string& var) const {
  if (Tainted(var)) return VarInfo{};
  auto local = infos_.find(var);
  if (local != infos_.end()) return local->second;
  auto global = state_.infos.find(var);
  if (global != state_.infos.end()) return global->second;
  auto constant = state_.constants.find(var);
  if (constant != state_.constants.end()) return InfoOf(constant->second);
  auto made = new_constants_.find(var);
  if (made != new_constants_.end()) return InfoOf(made->second);
  return VarInfo{};
}

int32_t NodeContext::ReserveBlock() {
  BlockDef* block = state_.net->add_blocks();
  block->set_parent_idx(state_.block_index);
  return state_.net->blocks_size() - 1;
}

void NodeContext::SetInfo(const std::string& var, VarInfo info) {
  tainted_.erase(var);
  infos_[var] = std::move(info);
}

void NodeContext::Declare(const std::string& var, VarInfo info) {
  VarDef def;
  def.set_name(var);
  def.set_kind(VAR_KIND_DENSE_TENSOR);
  def.set_dtype(info.dtype);
  for (int64_t d : info.dims) def.add_shape(d);
  new_vars_.push_back(std::move(def));
  SetInfo(var, std::move(info));
}

int32_t NodeContext::AddBlock(BlockDef block) {
  block.set_parent_idx(state_.block_index);
  new_blocks_.push_back(std::move(block));
  return state_.net->blocks_size() +
         static_cast<int32_t>(new_blocks_.size()) - 1;
}

absl::Status NodeContext::Emit(const OpBuilder& builder) {
  const OpDef& def = builder.def();
  const OpSpec* spec = OpRegistry::Global().Find(def.type());
  if (spec == nullptr) {
    return absl::InternalError(absl::StrFormat(
        "converter emitted unknown op type \"%s\" (is //operators linked?)",
        def.type()));
  }
  const std::string prefix = absl::StrCat("scopeflow ", def.type());
  PreparedOp op;
  op.spec = spec;
  op.inputs.resize(spec->inputs().size());
  op.outputs.resize(spec->outputs().size());
  std::vector<VarInfo> table;
  std::vector<std::string> names;
  // Inference is skipped when an input's dtype is unknown (it comes from a
  // node that failed, or the model declares no type): the problem lies
  // elsewhere and is reported there.
  bool unknown = false;
  for (const OpSlot& slot : def.inputs()) {
    const int s = spec->InputIndex(slot.slot());
    if (s < 0) {
      return absl::InternalError(
          absl::StrFormat("%s has no input slot \"%s\"", prefix, slot.slot()));
    }
    for (const std::string& var : slot.vars()) {
      if (!Known(var)) {
        return absl::InternalError(absl::StrFormat(
            "%s reads variable \"%s\", which nothing defines", prefix, var));
      }
      const VarInfo info = Info(var);
      unknown = unknown || Tainted(var) || info.dtype == DATA_TYPE_UNSPECIFIED;
      op.inputs[s].push_back(static_cast<int>(table.size()));
      table.push_back(info);
      names.push_back(var);
    }
  }
  for (const OpSlot& slot : def.outputs()) {
    const int s = spec->OutputIndex(slot.slot());
    if (s < 0) {
      return absl::InternalError(
          absl::StrFormat("%s has no output slot \"%s\"", prefix, slot.slot()));
    }
    for (const std::string& var : slot.vars()) {
      op.outputs[s].push_back(static_cast<int>(table.size()));
      table.emplace_back();
      names.push_back(var);
    }
  }
  for (size_t s = 0; s < spec->inputs().size(); ++s) {
    if (!spec->inputs()[s].optional && op.inputs[s].empty()) {
      return absl::InternalError(absl::StrFormat(
          "%s: missing input \"%s\"", prefix, spec->inputs()[s].name));
    }
  }
  for (size_t s = 0; s < spec->outputs().size(); ++s) {
    if (!spec->outputs()[s].optional && op.outputs[s].empty()) {
      return absl::InternalError(absl::StrFormat(
          "%s: missing output \"%s\"", prefix, spec->outputs()[s].name));
    }
  }
  for (const AttrDef& attr : def.attrs()) {
    const AttrSpec* attr_spec = spec->FindAttr(attr.name());
    if (attr_spec == nullptr) {
      return absl::InternalError(
          absl::StrFormat("%s has no attribute \"%s\"", prefix, attr.name()));
    }
    absl::StatusOr<AttrValue> value = AttrValueFromProto(attr);
    if (value.ok()) value = ConvertAttrValue(*value, attr_spec->type);
    if (!value.ok()) {
      return absl::InternalError(absl::StrFormat("%s attribute \"%s\": %s",
                                                 prefix, attr.name(),
                                                 value.status().message()));
    }
    if (attr_spec->check != nullptr) {
      absl::Status checked = attr_spec->check(*value);
      if (!checked.ok()) {
        return Unsupported(absl::StrFormat("%s: attribute \"%s\" %s", prefix,
                                           attr.name(), checked.message()));
      }
    }
    op.attrs.Set(attr.name(), *std::move(value));
  }
  for (const AttrSpec& attr_spec : spec->attrs()) {
    if (op.attrs.Has(attr_spec.name)) continue;
    if (!attr_spec.default_value.has_value()) {
      return absl::InternalError(absl::StrFormat(
          "%s: missing required attribute \"%s\"", prefix, attr_spec.name));
    }
    op.attrs.Set(attr_spec.name, *attr_spec.default_value);
  }
  if (!unknown) {
    if (spec->infer() != nullptr) {
      InferContext context(op, table, names);
      absl::Status inferred = spec->infer()(context);
      if (!inferred.ok()) {
        return Unsupported(absl::StrCat(
            prefix, " rejects the converted node: ", inferred.message()));
      }
    }
    const int slot = spec->kernel_dtype_slot();
    const auto& slots = spec->kernel_dtype_from_input() && !op.inputs.empty()
                            ? op.inputs
                            : op.outputs;
    if (slot >= 0 && slot < static_cast<int>(slots.size()) &&
        !slots[slot].empty()) {
      const DataType dtype = table[slots[slot][0]].dtype;
      if (dtype != DATA_TYPE_UNSPECIFIED &&
          spec->FindKernel(KernelKey{DeviceType::kCPU, dtype}) == nullptr) {
        return Unsupported(absl::StrFormat(
            "%s has no CPU kernel for %s (it has: %s)", prefix,
            DataTypeName(dtype), spec->KernelDtypes(DeviceType::kCPU)));
      }
    }
  }
  for (const auto& slot : op.outputs) {
    for (int v : slot) {
      if (unknown) {
        tainted_.insert(names[v]);
      } else {
        infos_[names[v]] = table[v];
      }
    }
  }
  ops_.push_back(def);
  return absl::OkStatus();
}

absl::Status NodeContext::Commit() {
  absl::flat_hash_set<std::string> written;
  for (const OpDef& op : ops_) {
    for (const OpSlot& slot : op.outputs()) {
      for (const std::string& var : slot.vars()) written.insert(var);
    }
  }
  for (int i = 0; i < node_.output_size(); ++i) {
    if (!HasOutput(i)) continue;
    if (!written.contains(Output(i)) && !new_constants_.contains(Output(i)) &&
        !new_sequences_.contains(Output(i))) {
      return absl::InternalError(absl::StrFormat(
          "the conversion does not produce output %d (\"%s\")", i, Output(i)));
    }
  }
  // Not the ops a control-flow node becomes: their sub-blocks read the
  // counters and initial values the node sets up by name, and learn their
  // shapes from these ops' outputs, which folding would turn into
  // parameters without the VarInfo the sub-blocks are prepared with.
  const bool control_flow = node_.op_type() == "If" ||
                            node_.op_type() == "Loop" ||
                            node_.op_type() == "Scan";
  if (state_.options.fold_constants && !control_flow) {
    SF_RETURN_IF_ERROR(FoldConstantOps());
  }
  for (auto& [name, value] : new_constants_) {
    state_.constants[name] = std::move(value);
  }
  for (auto& [name, value] : new_sequences_) {
    state_.sequences[name] = std::move(value);
  }
  for (const std::string& name : new_params_) {
    DeclareParam(state_, name, state_.constants.at(name));
  }
  for (auto& [name, info] : infos_) {
    // Where inference could not tell the dims, the model's declaration may.
    auto declared = state_.declared.find(name);
    if (!info.has_dims && declared != state_.declared.end() &&
        declared->second.has_dims &&
        (declared->second.dtype == info.dtype ||
         declared->second.dtype == DATA_TYPE_UNSPECIFIED)) {
      info.has_dims = true;
      info.dims = declared->second.dims;
    }
    state_.infos[name] = std::move(info);
  }
  for (const std::string& name : tainted_) state_.tainted.insert(name);
  for (VarDef& var : new_vars_) *state_.block->add_vars() = std::move(var);
  new_vars_.clear();
  for (OpDef& op : ops_) *state_.block->add_ops() = std::move(op);
  ops_.clear();
  for (BlockDef& block : new_blocks_) *state_.net->add_blocks() = std::move(block);
  new_blocks_.clear();
  return absl::OkStatus();
}

absl::Status NodeContext::FoldConstantOps() {
  auto constant = [this](const std::string& var) -> const Tensor* {
    if (Tainted(var)) return nullptr;
    auto made = new_constants_.find(var);
    if (made != new_constants_.end()) return &made->second;
    auto known = state_.constants.find(var);
    return known != state_.constants.end() ? &known->second : nullptr;
  };
  auto info = [this](const std::string& var) { return Info(var); };
  std::vector<OpDef> kept;
  for (OpDef& op : ops_) {
    std::optional<std::vector<NamedTensor>> folded;
    if (std::optional<NamedTensor> dims =
            FoldDims(op, constant, info, state_.dims_values)) {
      folded.emplace().push_back(*std::move(dims));
    } else {
      SF_ASSIGN_OR_RETURN(folded, FoldOp(op, constant, info));
    }
    if (!folded.has_value()) {
      kept.push_back(std::move(op));
      continue;
    }
    for (NamedTensor& value : *folded) {
      infos_.erase(value.name);
      new_constants_[value.name] = std::move(value.tensor);
    }
  }
  ops_ = std::move(kept);
  absl::flat_hash_set<std::string> read;
  for (const OpDef& op : ops_) {
    for (const OpSlot& slot : op.inputs()) {
      read.insert(slot.vars().begin(), slot.vars().end());
    }
  }
  new_params_.erase(
      std::remove_if(new_params_.begin(), new_params_.end(),
                     [&](const std::string& name) { return !read.contains(name); }),
      new_params_.end());
  // What folded ops computed for the node's other ops to read at run time.
  for (const OpDef& op : ops_) {
    for (const OpSlot& slot : op.inputs()) {
      for (const std::string& var : slot.vars()) {
        if (new_constants_.contains(var) && !state_.infos.contains(var) &&
            std::find(new_params_.begin(), new_params_.end(), var) ==
                new_params_.end()) {
          new_params_.push_back(var);
        }
      }
    }
  }
  return absl::OkStatus();
}

void NodeContext::Taint() {
  for (const std::string& output : node_.output()) {
    if (!output.empty()) state_.tainted.insert(output);
  }
}

absl::Status Unsupported(absl::string_view reason) {
  return absl::UnimplementedError(reason);
}

absl::StatusOr<int32_t> ToInt32(int64_t value, absl::string_view what) {
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return Unsupported(absl::StrFormat(
        "%s = %d does not fit the int32 attribute scopeflow takes", what,
        value));
  }
  return static_cast<int32_t>(value);
}

absl::StatusOr<std::vector<int32_t>> ToInt32s(
    const std::vector<int64_t>& values, absl::string_view what) {
  std::vector<int32_t> result;
  result.reserve(values.size());
  for (int64_t v : values) {
    SF_ASSIGN_OR_RETURN(const int32_t narrow, ToInt32(v, what));
    result.push_back(narrow);
  }
  return result;
}

std::vector<int32_t> ClampToInt32(const std::vector<int64_t>& values) {
  std::vector<int32_t> result;
  result.reserve(values.size());
  for (int64_t v : values) {
    result.push_back(static_cast<int32_t>(
        std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                            std::numeric_limits<int32_t>::max())));
  }
  return result;
}

std::string IntsToString(const std::vector<int64_t>& values) {
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
}

}  // namespace onnx_import
}  // namespace scopeflow
