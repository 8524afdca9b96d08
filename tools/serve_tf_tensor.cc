#include "tools/serve_tf_tensor.h"

#include <cstring>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::StatusOr<DataType> DataTypeOfTf(const std::string& name,
                                      tensorflow::DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_FLOAT:
      return kFloat32;
    case tensorflow::DT_DOUBLE:
      return kFloat64;
    case tensorflow::DT_HALF:
      return kFloat16;
    case tensorflow::DT_INT32:
      return kInt32;
    case tensorflow::DT_INT64:
      return kInt64;
    case tensorflow::DT_UINT8:
      return kUInt8;
    case tensorflow::DT_INT8:
      return kInt8;
    case tensorflow::DT_BOOL:
      return kBool;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "input \"", name, "\" has TensorFlow dtype ",
          tensorflow::DataType_Name(dtype),
          ", which scopeflow lacks (it has DT_FLOAT, DT_DOUBLE, DT_HALF, "
          "DT_INT32, DT_INT64, DT_UINT8, DT_INT8, DT_BOOL)"));
  }
}

// Copies `values` (count n: 1 fills every element) into `tensor`'s
// elements of type T.
template <typename T, typename Values>
absl::Status CopyValues(const std::string& name, const Values& values,
                        Tensor& tensor) {
  const int64_t n = values.size();
  const int64_t numel = tensor.numel();
  SF_CHECK(n == numel || (n == 1 && numel > 0),
           "input \"%s\": %d values for shape %s, which holds %d", name, n,
           DimsToString(tensor.dims()), numel);
  T* out = tensor.data<T>();
  for (int64_t i = 0; i < numel; ++i) {
    if constexpr (std::is_same_v<T, float16>) {
      out[i] = float16{static_cast<uint16_t>(values[n == 1 ? 0 : i])};
    } else {
      out[i] = static_cast<T>(values[n == 1 ? 0 : i]);
    }
  }
  return absl::OkStatus();
}

tensorflow::TensorShapeProto ShapeOf(const TensorInfo& info) {
  tensorflow::TensorShapeProto shape;
  if (!info.has_dims) {
    shape.set_unknown_rank(true);
    return shape;
  }
  for (size_t i = 0; i < info.dims.size(); ++i) {
    tensorflow::TensorShapeProto::Dim* dim = shape.add_dim();
    dim->set_size(info.dims[i]);
    if (i < info.dim_names.size()) dim->set_name(info.dim_names[i]);
  }
  return shape;
}

tensorflow::TensorInfo TfInfoOf(const TensorInfo& info) {
  tensorflow::TensorInfo out;
  out.set_name(info.name);
  out.set_dtype(TfDataTypeOf(info.dtype));
  *out.mutable_tensor_shape() = ShapeOf(info);
  return out;
}

}  // namespace

tensorflow::DataType TfDataTypeOf(DataType dtype) {
  switch (dtype) {
    case kFloat32:
      return tensorflow::DT_FLOAT;
    case kFloat64:
      return tensorflow::DT_DOUBLE;
    case kFloat16:
      return tensorflow::DT_HALF;
    case kInt32:
      return tensorflow::DT_INT32;
    case kInt64:
      return tensorflow::DT_INT64;
    case kUInt8:
      return tensorflow::DT_UINT8;
    case kInt8:
      return tensorflow::DT_INT8;
    case kBool:
      return tensorflow::DT_BOOL;
    default:
      return tensorflow::DT_INVALID;
  }
}

absl::StatusOr<Tensor> TensorFromTfProto(const std::string& name,
                                         const tensorflow::TensorProto& proto) {
  SF_ASSIGN_OR_RETURN(const DataType dtype, DataTypeOfTf(name, proto.dtype()));
  SF_CHECK(!proto.tensor_shape().unknown_rank(),
           "input \"%s\": the tensor's shape has an unknown rank", name);
  Dims dims;
  for (const tensorflow::TensorShapeProto::Dim& dim :
       proto.tensor_shape().dim()) {
    SF_CHECK(dim.size() >= 0, "input \"%s\": dimension %d of the shape is %d",
             name, dims.size(), dim.size());
    dims.push_back(dim.size());
  }
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, dims));
  if (!proto.tensor_content().empty()) {
    SF_CHECK(proto.tensor_content().size() == tensor.nbytes(),
             "input \"%s\": tensor_content has %d bytes; %s %s needs %d", name,
             proto.tensor_content().size(), DataTypeName(dtype),
             DimsToString(dims), tensor.nbytes());
    std::memcpy(tensor.raw_data(), proto.tensor_content().data(),
                tensor.nbytes());
    return tensor;
  }
  switch (dtype) {
    case kFloat32:
      SF_RETURN_IF_ERROR(CopyValues<float>(name, proto.float_val(), tensor));
      break;
    case kFloat64:
      SF_RETURN_IF_ERROR(CopyValues<double>(name, proto.double_val(), tensor));
      break;
    case kFloat16:
      SF_RETURN_IF_ERROR(CopyValues<float16>(name, proto.half_val(), tensor));
      break;
    case kInt32:
      SF_RETURN_IF_ERROR(CopyValues<int32_t>(name, proto.int_val(), tensor));
      break;
    case kUInt8:
      SF_RETURN_IF_ERROR(CopyValues<uint8_t>(name, proto.int_val(), tensor));
      break;
    case kInt8:
      SF_RETURN_IF_ERROR(CopyValues<int8_t>(name, proto.int_val(), tensor));
      break;
    case kInt64:
      SF_RETURN_IF_ERROR(CopyValues<int64_t>(name, proto.int64_val(), tensor));
      break;
    case kBool:
      SF_RETURN_IF_ERROR(CopyValues<bool>(name, proto.bool_val(), tensor));
      break;
    default:
      break;
  }
  return tensor;
}

tensorflow::TensorProto TfProtoOf(const Tensor& tensor) {
  tensorflow::TensorProto proto;
  proto.set_dtype(TfDataTypeOf(tensor.dtype()));
  for (int64_t dim : tensor.dims()) {
    proto.mutable_tensor_shape()->add_dim()->set_size(dim);
  }
  proto.set_tensor_content(static_cast<const char*>(tensor.raw_data()),
                           tensor.nbytes());
  return proto;
}

tensorflow::SignatureDef SignatureDefOf(const Predictor& predictor) {
  tensorflow::SignatureDef signature;
  for (const TensorInfo& info : predictor.inputs()) {
    (*signature.mutable_inputs())[info.name] = TfInfoOf(info);
  }
  for (const TensorInfo& info : predictor.outputs()) {
    (*signature.mutable_outputs())[info.name] = TfInfoOf(info);
  }
  signature.set_method_name("tensorflow/serving/predict");
  return signature;
}

}  // namespace scopeflow
