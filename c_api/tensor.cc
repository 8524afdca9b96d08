// The C API's tensors: host memory the library allocates, or the caller's
// memory viewed without a copy.
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/dtype_names.h"
#include "framework/data_type.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace c_api {
namespace {

absl::StatusOr<Dims> ToDims(const char* function, const int64_t* dims,
                            size_t rank) {
  if (rank > 0) SF_RETURN_IF_ERROR(CheckNotNull(dims, function, "dims"));
  return Dims(dims, dims + rank);
}

absl::Status CheckDataType(const char* function, sf_dtype dtype) {
  SF_CHECK(IsDtype(dtype), "%s: %d is no dtype (they are %d to %d)", function,
           static_cast<int>(dtype), static_cast<int>(SF_FLOAT32),
           static_cast<int>(SF_FLOAT8E5M2FNUZ));
  return absl::OkStatus();
}

}  // namespace
}  // namespace c_api
}  // namespace scopeflow

using scopeflow::c_api::CheckNotNull;
using scopeflow::c_api::Guard;

extern "C" {

sf_status* sf_tensor_create(sf_dtype dtype, const int64_t* dims, size_t rank,
                            sf_tensor** out) {
  static constexpr char kFunction[] = "sf_tensor_create";
  return Guard(kFunction, [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(out, kFunction, "out"));
    SF_RETURN_IF_ERROR(scopeflow::c_api::CheckDataType(kFunction, dtype));
    SF_ASSIGN_OR_RETURN(scopeflow::Dims shape,
                        scopeflow::c_api::ToDims(kFunction, dims, rank));
    auto tensor = std::make_unique<sf_tensor>();
    SF_RETURN_IF_ERROR(tensor->tensor.Allocate(
        scopeflow::CPUPlace(), static_cast<scopeflow::DataType>(dtype),
        std::move(shape)));
    if (tensor->tensor.nbytes() > 0) {
      std::memset(tensor->tensor.raw_data(), 0, tensor->tensor.nbytes());
    }
    *out = tensor.release();
    return absl::OkStatus();
  });
}

sf_status* sf_tensor_wrap(void* data, size_t byte_size, sf_dtype dtype,
                          const int64_t* dims, size_t rank, sf_tensor** out) {
  static constexpr char kFunction[] = "sf_tensor_wrap";
  return Guard(kFunction, [&]() -> absl::Status {
    SF_RETURN_IF_ERROR(CheckNotNull(out, kFunction, "out"));
    SF_RETURN_IF_ERROR(scopeflow::c_api::CheckDataType(kFunction, dtype));
    SF_ASSIGN_OR_RETURN(scopeflow::Dims shape,
                        scopeflow::c_api::ToDims(kFunction, dims, rank));
    SF_ASSIGN_OR_RETURN(
        scopeflow::Tensor view,
        scopeflow::Tensor::FromExternal(
            data, static_cast<scopeflow::DataType>(dtype), shape));
    SF_CHECK(view.nbytes() == byte_size,
             "%s: %s %s takes %d bytes, but byte_size is %d", kFunction,
             sf_dtype_name(dtype), scopeflow::DimsToString(shape),
             view.nbytes(), byte_size);
    *out = new sf_tensor{std::move(view)};
    return absl::OkStatus();
  });
}

void sf_tensor_free(sf_tensor* tensor) { delete tensor; }

sf_dtype sf_tensor_dtype(const sf_tensor* tensor) {
  return tensor == nullptr ? SF_DTYPE_UNSPECIFIED
                           : static_cast<sf_dtype>(tensor->tensor.dtype());
}

int sf_tensor_rank(const sf_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.rank();
}

int64_t sf_tensor_dim(const sf_tensor* tensor, int axis) {
  if (tensor == nullptr || axis < 0 || axis >= tensor->tensor.rank()) return -1;
  return tensor->tensor.dim(axis);
}

int64_t sf_tensor_num_elements(const sf_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.numel();
}

size_t sf_tensor_byte_size(const sf_tensor* tensor) {
  return tensor == nullptr ? 0 : tensor->tensor.nbytes();
}

void* sf_tensor_data(sf_tensor* tensor) {
  if (tensor == nullptr || !tensor->tensor.initialized() ||
      tensor->tensor.numel() == 0) {
    return nullptr;
  }
  // The mutable accessor declares the contents written.
  return tensor->tensor.raw_data();
}

const void* sf_tensor_const_data(const sf_tensor* tensor) {
  if (tensor == nullptr || !tensor->tensor.initialized() ||
      tensor->tensor.numel() == 0) {
    return nullptr;
  }
  return tensor->tensor.raw_data();
}

}  // extern "C"
