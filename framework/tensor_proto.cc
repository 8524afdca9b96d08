#include "framework/tensor_proto.h"

#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {

// Tensors are stored in the host's byte order; scopeflow runs on
// little-endian hosts only, which is the file format's order.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "scopeflow's tensor files are little-endian");

absl::StatusOr<TensorProto> TensorToProto(const Tensor& tensor) {
  TensorProto proto;
  proto.set_dtype(tensor.dtype());
  for (int64_t d : tensor.dims()) proto.add_dims(d);
  std::string* data = proto.mutable_data();
  data->resize(tensor.nbytes());
  SF_RETURN_IF_ERROR(CopyBytes(CPUPlace(), data->data(), tensor.place(),
                               tensor.raw_data(), tensor.nbytes()));
  return proto;
}

absl::StatusOr<Tensor> TensorFromProto(const TensorProto& proto,
                                       const Place& place) {
  SF_CHECK(IsValidDataType(proto.dtype()), "tensor \"%s\": invalid dtype %s",
           proto.name(), DataTypeName(proto.dtype()));
  Dims dims(proto.dims().begin(), proto.dims().end());
  for (int64_t d : dims) {
    SF_CHECK(d >= 0, "tensor \"%s\": negative dimension in %s", proto.name(),
             DimsToString(dims));
  }
  const size_t expected =
      static_cast<size_t>(NumElements(dims)) * SizeOf(proto.dtype());
  SF_CHECK(proto.data().size() == expected,
           "tensor \"%s\": %s of %s needs %d bytes of data, found %d",
           proto.name(), DataTypeName(proto.dtype()), DimsToString(dims),
           expected, proto.data().size());
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(place, proto.dtype(), std::move(dims)));
  // int4 and the other dtypes of framework/small_types.h are one element
  // per byte, as in memory: a byte outside the type's range is refused.
  const int64_t invalid = FindInvalidSmallElement(
      proto.dtype(), proto.data().data(), tensor.numel());
  SF_CHECK(invalid < 0, "tensor \"%s\": element %d is byte 0x%02x, no %s value",
           proto.name(), invalid,
           invalid < 0 ? 0 : static_cast<uint8_t>(proto.data()[invalid]),
           DataTypeName(proto.dtype()));
  SF_RETURN_IF_ERROR(CopyBytes(place, tensor.raw_data(), CPUPlace(),
                               proto.data().data(), expected));
  return tensor;
}

}  // namespace scopeflow
