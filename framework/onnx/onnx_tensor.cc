#include "framework/onnx/onnx_tensor.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "framework/float16.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

using OnnxType = onnx::TensorProto::DataType;

// Copies the typed field `values` into `out` (numel elements of T),
// converting each entry (e.g. int32_data holds one bool or uint8 each).
template <typename T, typename Field>
absl::Status CopyTyped(const Field& values, const std::string& what,
                       const char* field, Tensor& out) {
  SF_CHECK(values.size() == out.numel(),
           "tensor \"%s\": %s holds %d elements, but dims %s need %d", what,
           field, values.size(), DimsToString(out.dims()), out.numel());
  T* data = out.data<T>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      data[i] = values[i] != 0;
    } else if constexpr (std::is_same_v<T, float16> ||
                         std::is_same_v<T, bfloat16>) {
      // FLOAT16 and BFLOAT16 entries of int32_data are the bit pattern.
      data[i].bits = static_cast<uint16_t>(values[i]);
    } else if constexpr (sizeof(T) == 1 && !std::is_integral_v<T>) {
      // So are the FLOAT8 ones.
      data[i].bits = static_cast<uint8_t>(values[i]);
    } else {
      data[i] = static_cast<T>(values[i]);
    }
  }
  return absl::OkStatus();
}

// How many elements of a sub-byte dtype ONNX packs into a byte, in words.
const char* PerByte(DataType dtype) {
  return PackedBitsOf(dtype) == 4 ? "two per byte" : "four per byte";
}

// A tensor of sub-byte `dtype` (framework/small_types.h) from ONNX's packed
// layout: raw_data, or int32_data holding one packed byte per entry, as
// onnx.numpy_helper reads them. `out` is allocated, one element per byte.
absl::Status ReadPacked(const onnx::TensorProto& proto, DataType dtype,
                        Tensor& out) {
  const std::string& what = proto.name();
  const int64_t count = out.numel();
  const int64_t bytes = PackedByteSize(dtype, count);
  std::string packed;
  if (proto.has_raw_data()) {
    SF_CHECK(static_cast<int64_t>(proto.raw_data().size()) == bytes,
             "tensor \"%s\": raw_data holds %d bytes, but %s %s packs its %d "
             "elements (%s) into %d",
             what, proto.raw_data().size(), OnnxTypeName(proto.data_type()),
             DimsToString(out.dims()), count, PerByte(dtype), bytes);
    packed = proto.raw_data();
  } else {
    SF_CHECK(proto.int32_data_size() == bytes,
             "tensor \"%s\": int32_data holds %d entries, but %s %s packs "
             "its %d elements (%s) into %d bytes, one per entry",
             what, proto.int32_data_size(), OnnxTypeName(proto.data_type()),
             DimsToString(out.dims()), count, PerByte(dtype), bytes);
    packed.resize(bytes);
    for (int64_t i = 0; i < bytes; ++i) {
      const int32_t entry = proto.int32_data(i);
      SF_CHECK(entry >= 0 && entry <= 255,
               "tensor \"%s\": int32_data[%d] is %d: expected a packed byte "
               "(0 to 255) of %s",
               what, i, entry, OnnxTypeName(proto.data_type()));
      packed[i] = static_cast<char>(entry);
    }
  }
  UnpackSmallElements(dtype, packed, count,
                      static_cast<uint8_t*>(out.raw_data()));
  return absl::OkStatus();
}

}  // namespace

std::string OnnxTypeName(int32_t onnx_type) {
  if (onnx::TensorProto::DataType_IsValid(onnx_type)) {
    return onnx::TensorProto::DataType_Name(static_cast<OnnxType>(onnx_type));
  }
  return absl::StrCat("data type ", onnx_type);
}

absl::StatusOr<DataType> DataTypeFromOnnx(int32_t onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT:
      return kFloat32;
    case onnx::TensorProto::DOUBLE:
      return kFloat64;
    case onnx::TensorProto::FLOAT16:
      return kFloat16;
    case onnx::TensorProto::INT32:
      return kInt32;
    case onnx::TensorProto::INT64:
      return kInt64;
    case onnx::TensorProto::UINT8:
      return kUInt8;
    case onnx::TensorProto::INT8:
      return kInt8;
    case onnx::TensorProto::INT16:
      return kInt16;
    case onnx::TensorProto::UINT16:
      return kUInt16;
    case onnx::TensorProto::UINT32:
      return kUInt32;
    case onnx::TensorProto::UINT64:
      return kUInt64;
    case onnx::TensorProto::BFLOAT16:
      return kBFloat16;
    case onnx::TensorProto::FLOAT8E4M3FN:
      return kFloat8E4M3FN;
    case onnx::TensorProto::FLOAT8E4M3FNUZ:
      return kFloat8E4M3FNUZ;
    case onnx::TensorProto::FLOAT8E5M2:
      return kFloat8E5M2;
    case onnx::TensorProto::FLOAT8E5M2FNUZ:
      return kFloat8E5M2FNUZ;
    case onnx::TensorProto::BOOL:
      return kBool;
    case onnx::TensorProto::INT4:
      return kInt4;
    case onnx::TensorProto::UINT4:
      return kUInt4;
    case onnx::TensorProto::INT2:
      return kInt2;
    case onnx::TensorProto::UINT2:
      return kUInt2;
    case onnx::TensorProto::FLOAT4E2M1:
      return kFloat4E2M1;
    case onnx::TensorProto::FLOAT8E8M0:
      return kFloat8E8M0;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "element type ", OnnxTypeName(onnx_type),
          " has no scopeflow dtype (scopeflow has ", AllDataTypeNames(), ")"));
  }
}

int32_t OnnxTypeFromDataType(DataType dtype) {
  switch (dtype) {
    case kFloat32:
      return onnx::TensorProto::FLOAT;
    case kFloat64:
      return onnx::TensorProto::DOUBLE;
    case kFloat16:
      return onnx::TensorProto::FLOAT16;
    case kInt32:
      return onnx::TensorProto::INT32;
    case kInt64:
      return onnx::TensorProto::INT64;
    case kUInt8:
      return onnx::TensorProto::UINT8;
    case kInt8:
      return onnx::TensorProto::INT8;
    case kInt16:
      return onnx::TensorProto::INT16;
    case kUInt16:
      return onnx::TensorProto::UINT16;
    case kUInt32:
      return onnx::TensorProto::UINT32;
    case kUInt64:
      return onnx::TensorProto::UINT64;
    case kBFloat16:
      return onnx::TensorProto::BFLOAT16;
    case kFloat8E4M3FN:
      return onnx::TensorProto::FLOAT8E4M3FN;
    case kFloat8E4M3FNUZ:
      return onnx::TensorProto::FLOAT8E4M3FNUZ;
    case kFloat8E5M2:
      return onnx::TensorProto::FLOAT8E5M2;
    case kFloat8E5M2FNUZ:
      return onnx::TensorProto::FLOAT8E5M2FNUZ;
    case kBool:
      return onnx::TensorProto::BOOL;
    case kInt4:
      return onnx::TensorProto::INT4;
    case kUInt4:
      return onnx::TensorProto::UINT4;
    case kInt2:
      return onnx::TensorProto::INT2;
    case kUInt2:
      return onnx::TensorProto::UINT2;
    case kFloat4E2M1:
      return onnx::TensorProto::FLOAT4E2M1;
    case kFloat8E8M0:
      return onnx::TensorProto::FLOAT8E8M0;
    default:
      return onnx::TensorProto::UNDEFINED;
  }
}

absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& proto) {
  const std::string& what = proto.name();
  SF_CHECK_CODE(proto.data_location() != onnx::TensorProto::EXTERNAL &&
                    proto.external_data_size() == 0,
                absl::StatusCode::kUnimplemented,
                "tensor \"%s\": its data lives in an external file, not "
                "loaded (ReadOnnxModel loads it, as LoadOnnxExternalData "
                "does for a model parsed otherwise)",
                what);
  SF_CHECK_CODE(!proto.has_segment(), absl::StatusCode::kUnimplemented,
                "tensor \"%s\" is a segment of a larger tensor, which the "
                "importer does not read",
                what);
  absl::StatusOr<DataType> dtype = DataTypeFromOnnx(proto.data_type());
  if (!dtype.ok()) {
    return absl::Status(
        dtype.status().code(),
        absl::StrCat("tensor \"", what, "\": ", dtype.status().message()));
  }
  Dims dims;
  int64_t numel = 1;
  for (int64_t d : proto.dims()) {
    SF_CHECK(d >= 0, "tensor \"%s\" has a negative dimension in %s", what,
             DimsToString(proto.dims()));
    SF_CHECK(!__builtin_mul_overflow(numel, d, &numel),
             "tensor \"%s\" of shape %s has more elements than int64 holds",
             what, DimsToString(proto.dims()));
    dims.push_back(d);
  }
  // The data must be in the file: check the count against what it holds
  // before allocating, so that a few bytes cannot ask for terabytes.
  if (IsSubByteDataType(*dtype)) {
    // Packed: checked against the packed size by ReadPacked.
    const int64_t held = proto.has_raw_data()
                             ? static_cast<int64_t>(proto.raw_data().size())
                             : proto.int32_data_size();
    SF_CHECK(PackedByteSize(*dtype, numel) <= held,
             "tensor \"%s\": %s %s packs its %d elements (%s) into %d "
             "bytes, but the file holds %d",
             what, OnnxTypeName(proto.data_type()), DimsToString(proto.dims()),
             numel, PerByte(*dtype), PackedByteSize(*dtype, numel), held);
  } else if (proto.has_raw_data()) {
    const size_t raw = proto.raw_data().size();
    const size_t size = SizeOf(*dtype);
    SF_CHECK(static_cast<uint64_t>(numel) <= raw / size &&
                 static_cast<size_t>(numel) * size == raw,
             "tensor \"%s\": raw_data holds %d bytes, but %s %s needs %d "
             "elements of %d bytes",
             what, raw, OnnxTypeName(proto.data_type()),
             DimsToString(proto.dims()), numel, size);
  } else {
    const int64_t held =
        std::max({proto.float_data_size(), proto.double_data_size(),
                  proto.int32_data_size(), proto.int64_data_size(),
                  proto.uint64_data_size()});
    SF_CHECK(numel <= held,
             "tensor \"%s\" of shape %s needs %d elements, but the file "
             "holds %d",
             what, DimsToString(proto.dims()), numel, held);
  }
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), *dtype, dims));
  if (IsSubByteDataType(*dtype)) {
    SF_RETURN_IF_ERROR(ReadPacked(proto, *dtype, tensor));
    return tensor;
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    SF_CHECK(raw.size() == tensor.nbytes(),
             "tensor \"%s\": raw_data holds %d bytes, but %s %s needs %d", what,
             raw.size(), OnnxTypeName(proto.data_type()), DimsToString(dims),
             tensor.nbytes());
    // Both sides are little-endian, row-major: the bytes are the elements
    // (ONNX stores bool as one byte, as scopeflow does).
    if (tensor.nbytes() > 0) {
      std::memcpy(tensor.raw_data(), raw.data(), raw.size());
    }
    if (*dtype == kBool) {
      // A byte other than 0 or 1 is no valid C++ bool.
      auto* bytes = static_cast<uint8_t*>(tensor.raw_data());
      for (int64_t i = 0; i < tensor.numel(); ++i) bytes[i] = bytes[i] != 0;
    }
    return tensor;
  }
  switch (*dtype) {
    case kFloat32:
      SF_RETURN_IF_ERROR(
          CopyTyped<float>(proto.float_data(), what, "float_data", tensor));
      break;
    case kFloat64:
      SF_RETURN_IF_ERROR(
          CopyTyped<double>(proto.double_data(), what, "double_data", tensor));
      break;
    case kInt64:
      SF_RETURN_IF_ERROR(
          CopyTyped<int64_t>(proto.int64_data(), what, "int64_data", tensor));
      break;
    case kInt32:
      SF_RETURN_IF_ERROR(
          CopyTyped<int32_t>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kUInt8:
      SF_RETURN_IF_ERROR(
          CopyTyped<uint8_t>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kInt8:
      SF_RETURN_IF_ERROR(
          CopyTyped<int8_t>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kBool:
      SF_RETURN_IF_ERROR(
          CopyTyped<bool>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kFloat16:
      SF_RETURN_IF_ERROR(
          CopyTyped<float16>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kBFloat16:
      SF_RETURN_IF_ERROR(
          CopyTyped<bfloat16>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kFloat8E4M3FN:
      SF_RETURN_IF_ERROR(CopyTyped<float8_e4m3fn>(proto.int32_data(), what,
                                                  "int32_data", tensor));
      break;
    case kFloat8E4M3FNUZ:
      SF_RETURN_IF_ERROR(CopyTyped<float8_e4m3fnuz>(proto.int32_data(), what,
                                                    "int32_data", tensor));
      break;
    case kFloat8E5M2:
      SF_RETURN_IF_ERROR(CopyTyped<float8_e5m2>(proto.int32_data(), what,
                                                "int32_data", tensor));
      break;
    case kFloat8E5M2FNUZ:
      SF_RETURN_IF_ERROR(CopyTyped<float8_e5m2fnuz>(proto.int32_data(), what,
                                                    "int32_data", tensor));
      break;
    case kInt16:
      SF_RETURN_IF_ERROR(
          CopyTyped<int16_t>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kUInt16:
      SF_RETURN_IF_ERROR(
          CopyTyped<uint16_t>(proto.int32_data(), what, "int32_data", tensor));
      break;
    case kUInt32:
      SF_RETURN_IF_ERROR(CopyTyped<uint32_t>(proto.uint64_data(), what,
                                             "uint64_data", tensor));
      break;
    case kUInt64:
      SF_RETURN_IF_ERROR(CopyTyped<uint64_t>(proto.uint64_data(), what,
                                             "uint64_data", tensor));
      break;
    case kFloat8E8M0:
      SF_RETURN_IF_ERROR(CopyTyped<float8_e8m0>(proto.int32_data(), what,
                                                "int32_data", tensor));
      break;
    default:
      return absl::InternalError(absl::StrCat(
          "tensor \"", what, "\": unhandled dtype ", DataTypeName(*dtype)));
  }
  return tensor;
}

absl::StatusOr<std::vector<int64_t>> TensorToInt64s(const Tensor& tensor,
                                                    const std::string& what) {
  std::vector<int64_t> values;
  values.reserve(tensor.numel());
  if (tensor.dtype() == kInt64) {
    const int64_t* data = tensor.data<int64_t>();
    values.assign(data, data + tensor.numel());
  } else if (tensor.dtype() == kInt32) {
    const int32_t* data = tensor.data<int32_t>();
    values.assign(data, data + tensor.numel());
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is ", DataTypeName(tensor.dtype()),
                     ": expected int64 (or int32)"));
  }
  return values;
}

absl::StatusOr<double> TensorToScalar(const Tensor& tensor,
                                      const std::string& what) {
  SF_CHECK(tensor.numel() == 1, "%s has shape %s: expected one element", what,
           DimsToString(tensor.dims()));
  switch (tensor.dtype()) {
    case kFloat32:
      return tensor.data<float>()[0];
    case kFloat64:
      return tensor.data<double>()[0];
    case kFloat16:
      return HalfToFloat(tensor.data<float16>()[0]);
    case kInt32:
      return tensor.data<int32_t>()[0];
    case kInt64:
      return static_cast<double>(tensor.data<int64_t>()[0]);
    case kUInt8:
      return tensor.data<uint8_t>()[0];
    case kInt8:
      return tensor.data<int8_t>()[0];
    case kInt16:
      return tensor.data<int16_t>()[0];
    case kUInt16:
      return tensor.data<uint16_t>()[0];
    case kUInt32:
      return tensor.data<uint32_t>()[0];
    case kUInt64:
      return static_cast<double>(tensor.data<uint64_t>()[0]);
    case kBFloat16:
      return BFloat16ToFloat(tensor.data<bfloat16>()[0]);
    case kFloat8E4M3FN:
      return Float8ToFloat(tensor.data<float8_e4m3fn>()[0]);
    case kFloat8E4M3FNUZ:
      return Float8ToFloat(tensor.data<float8_e4m3fnuz>()[0]);
    case kFloat8E5M2:
      return Float8ToFloat(tensor.data<float8_e5m2>()[0]);
    case kFloat8E5M2FNUZ:
      return Float8ToFloat(tensor.data<float8_e5m2fnuz>()[0]);
    case kBool:
      return tensor.data<bool>()[0] ? 1.0 : 0.0;
    case kInt4:
      return tensor.data<qint4>()[0].value;
    case kUInt4:
      return tensor.data<quint4>()[0].value;
    case kInt2:
      return tensor.data<qint2>()[0].value;
    case kUInt2:
      return tensor.data<quint2>()[0].value;
    case kFloat4E2M1:
      return Float4E2M1BitsToFloat(tensor.data<float4_e2m1>()[0].bits);
    case kFloat8E8M0:
      return Float8E8M0BitsToFloat(tensor.data<float8_e8m0>()[0].bits);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has dtype ", DataTypeName(tensor.dtype()), ": not a number"));
  }
}

}  // namespace onnx_import
}  // namespace scopeflow
