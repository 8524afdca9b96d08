// TensorFlow's tensor and signature messages (proto/tfserving) for the
// TensorFlow Serving protocols of `scopeflow serve`: TensorProto to and
// from Tensor, and a model's SignatureDef.
#ifndef SCOPEFLOW_TOOLS_SERVE_TF_TENSOR_H_
#define SCOPEFLOW_TOOLS_SERVE_TF_TENSOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/serving/predictor.h"
#include "framework/tensor.h"
#include "proto/tfserving/signature.pb.h"
#include "proto/tfserving/tensor.pb.h"

namespace scopeflow {

// The signature every model is served under (TensorFlow's default).
inline constexpr char kDefaultSignature[] = "serving_default";

// TensorFlow's DataType for `dtype` (DT_FLOAT for float32...).
tensorflow::DataType TfDataTypeOf(DataType dtype);

// The tensor of `proto`, named `name` in errors: its elements in
// tensor_content or in the typed field of its dtype (a single value fills
// every element, as TensorFlow reads it). InvalidArgument for a dtype
// scopeflow lacks (DT_STRING...), an unknown or negative dimension, or a
// count of elements that does not fit the shape.
absl::StatusOr<Tensor> TensorFromTfProto(const std::string& name,
                                         const tensorflow::TensorProto& proto);

// `tensor` (on the CPU) with its elements in tensor_content.
tensorflow::TensorProto TfProtoOf(const Tensor& tensor);

// The model's one signature, kDefaultSignature: its inputs and outputs by
// name, with dtypes and shapes (-1 for an unknown dimension).
tensorflow::SignatureDef SignatureDefOf(const Predictor& predictor);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TOOLS_SERVE_TF_TENSOR_H_
