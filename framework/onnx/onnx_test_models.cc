#include "framework/onnx/onnx_test_models.h"

#include <utility>

namespace scopeflow {
namespace onnx_testing {

onnx::ModelProto Model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(opset < 9 ? 3 : 8);
  onnx::OperatorSetIdProto* id = model.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  model.mutable_graph()->set_name("test_graph");
  return model;
}

void AddInput(onnx::ModelProto& model, const std::string& name,
              const std::vector<int64_t>& dims, int32_t elem_type) {
  onnx::ValueInfoProto* value = model.mutable_graph()->add_input();
  value->set_name(name);
  onnx::TypeProto::Tensor* tensor =
      value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("batch");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
}

void AddOutput(onnx::ModelProto& model, const std::string& name) {
  model.mutable_graph()->add_output()->set_name(name);
}

onnx::NodeProto* AddNode(onnx::ModelProto& model, const std::string& op_type,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs,
                         const std::string& name) {
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
  return node;
}

namespace {

onnx::AttributeProto* NewAttr(onnx::NodeProto* node, const std::string& name,
                              onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(type);
  return attr;
}

}  // namespace

void SetGraph(onnx::NodeProto* node, const std::string& name,
              const onnx::ModelProto& body) {
  *NewAttr(node, name, onnx::AttributeProto::GRAPH)->mutable_g() =
      body.graph();
}

void SetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  NewAttr(node, name, onnx::AttributeProto::INT)->set_i(value);
}

void SetInts(onnx::NodeProto* node, const std::string& name,
             const std::vector<int64_t>& values) {
  onnx::AttributeProto* attr = NewAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

void SetFloat(onnx::NodeProto* node, const std::string& name, float value) {
  NewAttr(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}

void SetFloats(onnx::NodeProto* node, const std::string& name,
               const std::vector<float>& values) {
  onnx::AttributeProto* attr =
      NewAttr(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) attr->add_floats(v);
}

void SetString(onnx::NodeProto* node, const std::string& name,
               const std::string& value) {
  NewAttr(node, name, onnx::AttributeProto::STRING)->set_s(value);
}

void SetTensor(onnx::NodeProto* node, const std::string& name,
               onnx::TensorProto value) {
  *NewAttr(node, name, onnx::AttributeProto::TENSOR)->mutable_t() =
      std::move(value);
}

onnx::TensorProto FloatProto(const std::string& name,
                             const std::vector<int64_t>& dims,
                             const std::vector<float>& values) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) proto.add_dims(d);
  for (float v : values) proto.add_float_data(v);
  return proto;
}

onnx::TensorProto Int64Proto(const std::string& name,
                             const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& values) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) proto.add_dims(d);
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                                 values.size() * sizeof(int64_t)));
  return proto;
}

void AddInitializer(onnx::ModelProto& model, onnx::TensorProto tensor) {
  *model.mutable_graph()->add_initializer() = std::move(tensor);
}

absl::StatusOr<std::vector<Tensor>> RunNet(const ImportedModel& model,
                                           std::vector<Feed> feeds) {
  const Executor executor;
  absl::StatusOr<PreparedNet> prepared =
      executor.Prepare(model.net, 0, CPUPlace());
  if (!prepared.ok()) return prepared.status();
  Scope scope;
  absl::Status added = AddParamsToScope(model, scope);
  if (!added.ok()) return added;
  return executor.Run(*prepared, scope, feeds, model.outputs);
}

std::vector<std::string> OpTypes(const ImportedModel& model) {
  std::vector<std::string> types;
  for (const OpDef& op : model.net.blocks(0).ops()) types.push_back(op.type());
  return types;
}

const OpDef* FindOp(const ImportedModel& model, const std::string& type) {
  for (const OpDef& op : model.net.blocks(0).ops()) {
    if (op.type() == type) return &op;
  }
  return nullptr;
}

const AttrDef* FindAttr(const OpDef& op, const std::string& name) {
  for (const AttrDef& attr : op.attrs()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::vector<std::string> InputSlots(const OpDef& op) {
  std::vector<std::string> slots;
  for (const OpSlot& slot : op.inputs()) slots.push_back(slot.slot());
  return slots;
}

}  // namespace onnx_testing
}  // namespace scopeflow
