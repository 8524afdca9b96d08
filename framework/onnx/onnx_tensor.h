// ONNX tensors and element types as scopeflow sees them: the dtype mapping,
// decoding an onnx.TensorProto (typed fields or raw_data) into a Tensor, and
// reading small integer tensors (axes, shapes) as vectors.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_ONNX_TENSOR_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_ONNX_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data_type.h"
#include "framework/tensor.h"
#include "proto/onnx.pb.h"

namespace scopeflow {
namespace onnx_import {

// "FLOAT", "INT64", ... for an onnx.TensorProto.DataType value, or
// "data type N" for a number outside the enum.
std::string OnnxTypeName(int32_t onnx_type);

// The scopeflow dtype of an ONNX element type: FLOAT, DOUBLE, FLOAT16,
// INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BFLOAT16, BOOL,
// the five FLOAT8 types, INT4, UINT4, INT2, UINT2 and FLOAT4E2M1 have one.
// Unimplemented, naming the type, for the others (STRING, COMPLEX64, ...).
absl::StatusOr<DataType> DataTypeFromOnnx(int32_t onnx_type);

// The ONNX element type of a scopeflow dtype.
int32_t OnnxTypeFromDataType(DataType dtype);

// A CPU tensor holding the elements of `proto`, read from raw_data or from
// the typed field its type uses (float_data, int32_data, int64_data,
// double_data). INT4, UINT4, INT2, UINT2 and FLOAT4E2M1 come packed (raw_data,
// or int32_data with a packed byte per entry) and are unpacked to one
// element per byte (framework/small_types.h). Errors name the tensor: an
// element type without a scopeflow dtype, external or segmented data
// (Unimplemented), an element count that does not match the dims
// (InvalidArgument).
absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& proto);

// The elements of an INT32 or INT64 tensor, as int64; InvalidArgument for
// other dtypes. `what` names the tensor in the error.
absl::StatusOr<std::vector<int64_t>> TensorToInt64s(const Tensor& tensor,
                                                    const std::string& what);

// The value of a one-element tensor of any numeric or bool dtype, as a
// double (exact for every dtype but int64 beyond 2^53); InvalidArgument if
// it does not hold exactly one element.
absl::StatusOr<double> TensorToScalar(const Tensor& tensor,
                                      const std::string& what);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_ONNX_TENSOR_H_
