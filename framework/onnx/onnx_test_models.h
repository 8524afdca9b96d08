// Builders of hand-made ONNX models for the importer's tests, and running
// what they import. Test-only.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_ONNX_TEST_MODELS_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_ONNX_TEST_MODELS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data_type.h"
#include "framework/executor.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/tensor.h"
#include "proto/onnx.pb.h"

namespace scopeflow {
namespace onnx_testing {

// A model importing the default domain at `opset`, with an empty graph.
onnx::ModelProto Model(int64_t opset);

// A graph input of `elem_type`; a negative dim is symbolic ("batch").
void AddInput(onnx::ModelProto& model, const std::string& name,
              const std::vector<int64_t>& dims,
              int32_t elem_type = onnx::TensorProto::FLOAT);
void AddOutput(onnx::ModelProto& model, const std::string& name);
onnx::NodeProto* AddNode(onnx::ModelProto& model, const std::string& op_type,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs,
                         const std::string& name = "");

void SetInt(onnx::NodeProto* node, const std::string& name, int64_t value);
void SetInts(onnx::NodeProto* node, const std::string& name,
             const std::vector<int64_t>& values);
void SetFloat(onnx::NodeProto* node, const std::string& name, float value);
void SetFloats(onnx::NodeProto* node, const std::string& name,
               const std::vector<float>& values);
void SetString(onnx::NodeProto* node, const std::string& name,
               const std::string& value);
void SetTensor(onnx::NodeProto* node, const std::string& name,
               onnx::TensorProto value);
// Sets graph attribute `name` (a control-flow node's subgraph) to the graph
// of `body`, a model built with the builders above (its opset unused).
void SetGraph(onnx::NodeProto* node, const std::string& name,
              const onnx::ModelProto& body);

// A FLOAT tensor with its elements in float_data.
onnx::TensorProto FloatProto(const std::string& name,
                             const std::vector<int64_t>& dims,
                             const std::vector<float>& values);
// An INT64 tensor with its elements in raw_data.
onnx::TensorProto Int64Proto(const std::string& name,
                             const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& values);
void AddInitializer(onnx::ModelProto& model, onnx::TensorProto tensor);

// A CPU tensor of `dims` holding `values`.
template <typename T>
Tensor MakeTensor(Dims dims, const std::vector<T>& values) {
  Tensor tensor;
  if (!tensor.Allocate(CPUPlace(), DataTypeOf<T>(), dims).ok()) return tensor;
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(tensor.numel());
       ++i) {
    tensor.data<T>()[i] = values[i];
  }
  return tensor;
}

// A tensor's elements as T (its dtype must be T's).
template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  return std::vector<T>(tensor.data<T>(), tensor.data<T>() + tensor.numel());
}

// Prepares the imported net on the CPU, runs it once against a scope holding
// its parameters, and fetches the graph outputs.
absl::StatusOr<std::vector<Tensor>> RunNet(const ImportedModel& model,
                                           std::vector<Feed> feeds);

// The imported net's op types, in order.
std::vector<std::string> OpTypes(const ImportedModel& model);
// The first op of `type`, or null.
const OpDef* FindOp(const ImportedModel& model, const std::string& type);
const AttrDef* FindAttr(const OpDef& op, const std::string& name);
// The input slots `op` binds.
std::vector<std::string> InputSlots(const OpDef& op);

}  // namespace onnx_testing
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_ONNX_TEST_MODELS_H_
