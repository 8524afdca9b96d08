// Conversions between Tensor and TensorProto.
#ifndef SCOPEFLOW_FRAMEWORK_TENSOR_PROTO_H_
#define SCOPEFLOW_FRAMEWORK_TENSOR_PROTO_H_

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace scopeflow {

// The tensor's elements as little-endian bytes (copied to the host first if
// the tensor lives on a device). `name` is left empty.
absl::StatusOr<TensorProto> TensorToProto(const Tensor& tensor);

// A tensor on `place` holding the proto's elements. InvalidArgument naming
// the proto's name if its dtype is invalid, a dimension is negative or the
// byte count does not match dtype and dims.
absl::StatusOr<Tensor> TensorFromProto(const TensorProto& proto,
                                       const Place& place = CPUPlace());

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TENSOR_PROTO_H_
