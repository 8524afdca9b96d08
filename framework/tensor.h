// Tensor: a shape, a dtype, a place and a buffer that views may share.
#ifndef SCOPEFLOW_FRAMEWORK_TENSOR_H_
#define SCOPEFLOW_FRAMEWORK_TENSOR_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/data_type.h"
#include "platform/allocator.h"
#include "platform/place.h"

namespace scopeflow {

// Dimensions of a tensor, outermost first. Most nets stay within 6.
using Dims = absl::InlinedVector<int64_t, 6>;

// The number of elements of `dims` (1 for a scalar, rank 0).
int64_t NumElements(absl::Span<const int64_t> dims);

// "[2, 3, 4]".
std::string DimsToString(absl::Span<const int64_t> dims);

// A dense, row-major tensor. Copying a Tensor is cheap and makes another
// view of the same buffer (as Slice and ShareBufferWith do); CopyTo makes a
// deep copy. The buffer lives as long as any view of it.
//
// Thread safety: a Tensor object is not synchronised. Distinct Tensor
// objects sharing one buffer may be used from different threads, but
// writing the elements while another thread reads them is the caller's race.
class Tensor {
 public:
  // An empty float32 tensor on the CPU, shape [0], with no buffer.
  Tensor() : dims_({0}) {}

  // Back to the state of a new tensor, dropping this one's view of its
  // buffer (freed if no other tensor views it); cheaper than assigning
  // Tensor(), which the executor does for every dead temporary.
  void Clear() {
    buffer_.reset();
    byte_offset_ = 0;
    numel_ = 0;
    dtype_ = kFloat32;
    place_ = Place();
    dims_.resize(1);
    dims_[0] = 0;
  }

  // A tensor over memory the caller owns, made without copying it: `data`
  // holds NumElements(dims) elements of `dtype` on `place`, row-major. The
  // tensor and its views (copies, slices, a run's feed) read and may write
  // that memory, so the caller keeps it valid until the last view is
  // destroyed; `release` (if given) is then called once, on the thread
  // dropping that view, to tell the caller the memory is free again.
  // InvalidArgument for an invalid dtype, a negative dimension, or a null
  // `data` with elements; `release` is not called then.
  static absl::StatusOr<Tensor> FromExternal(
      void* data, DataType dtype, Dims dims, const Place& place = CPUPlace(),
      std::function<void()> release = nullptr);

  const Dims& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  // Dimension `axis`; negative counts from the end.
  int64_t dim(int axis) const { return dims_[axis < 0 ? axis + rank() : axis]; }
  int64_t numel() const { return numel_; }
  DataType dtype() const { return dtype_; }
  const Place& place() const { return place_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * SizeOf(dtype_); }
  // Whether it has a buffer to read (an Allocate, a share or a slice).
  bool initialized() const { return buffer_ != nullptr; }

  // Gives the tensor `dims` and `dtype` and a buffer on `place` to match.
  // The current buffer is kept when it is on `place`, this tensor is its only
  // user and it is large enough; otherwise a new one is allocated (the old
  // one lives on in the views still holding it). Element values are
  // unspecified. Errors: a negative dimension, an invalid dtype, an
  // unavailable place, out of memory.
  absl::Status Allocate(const Place& place, DataType dtype, Dims dims);

  // Makes this tensor a view of `other`: same buffer, dims, dtype and place.
  void ShareBufferWith(const Tensor& other);

  // Clears the tensor (see Clear) and returns its buffer if no other tensor
  // viewed it, else null: a buffer a later Allocate may reuse.
  std::shared_ptr<Allocation> ReleaseBuffer();

  // Makes `spare`, a buffer no tensor views (from ReleaseBuffer), the
  // buffer of this tensor, which must have none, as an empty tensor of
  // shape [0] on the buffer's place; the next Allocate reuses it if it is
  // large enough.
  void AdoptBuffer(std::shared_ptr<Allocation> spare);

  // A view of rows [begin, end) along dimension 0, sharing the buffer.
  // InvalidArgument unless 0 <= begin <= end <= dim(0) and rank >= 1.
  absl::StatusOr<Tensor> Slice(int64_t begin, int64_t end) const;

  // Same elements in new dims (one may be -1, inferred); no copy.
  // InvalidArgument if the element counts differ.
  absl::Status Reshape(Dims dims);

  // A deep copy on `place` (which may be the same place).
  absl::StatusOr<Tensor> CopyTo(const Place& place) const;

  // The first element's address; null without a buffer.
  const void* raw_data() const {
    return buffer_ == nullptr
               ? nullptr
               : static_cast<const char*>(buffer_->data()) + byte_offset_;
  }
  void* raw_data() {
    MarkWritten();
    return buffer_ == nullptr
               ? nullptr
               : static_cast<char*>(buffer_->data()) + byte_offset_;
  }

  // The elements as T. The caller has checked the dtype (CheckType or
  // validation at prepare time); debug builds assert it.
  //
  // Kernels may keep copies derived from a buffer's contents between runs
  // (a weight matrix re-spaced for a faster product). Allocate declares the
  // write that follows it, and so does the executor for ops that update a
  // variable in place; whoever else changes the elements of a buffer that a
  // run may already have read (a parameter rewritten through this pointer
  // between runs) calls MarkWritten afterwards.
  template <typename T>
  const T* data() const {
    assert(DataTypeOf<T>() == dtype_);
    return static_cast<const T*>(raw_data());
  }
  template <typename T>
  T* data() {
    assert(DataTypeOf<T>() == dtype_);
    return static_cast<T*>(raw_data());
  }

  // OK if the tensor is initialized and holds elements of `dtype`; otherwise
  // an error naming both dtypes.
  absl::Status CheckType(DataType dtype) const;

  // The elements as T, checked: an error if not initialized or of another
  // dtype.
  template <typename T>
  absl::StatusOr<const T*> typed_data() const {
    absl::Status status = CheckType(DataTypeOf<T>());
    if (!status.ok()) return status;
    return data<T>();
  }
  template <typename T>
  absl::StatusOr<T*> typed_data() {
    absl::Status status = CheckType(DataTypeOf<T>());
    if (!status.ok()) return status;
    return data<T>();
  }

  // Declares that the elements were changed other than right after
  // Allocate, so that copies kept of the old contents are not used again.
  void MarkWritten() const {
    if (buffer_ != nullptr) buffer_->MarkWritten();
  }

  // The buffer the elements lie in (null without one), for kernels that
  // keep copies of its contents; raw_data() lies inside it.
  Allocation* buffer() const { return buffer_.get(); }

  // Whether two tensors view the same buffer.
  bool SharesBufferWith(const Tensor& other) const {
    return buffer_ != nullptr && buffer_ == other.buffer_;
  }

  // Whether no other tensor views this one's buffer.
  bool OwnsBufferAlone() const {
    return buffer_ != nullptr && buffer_.use_count() == 1;
  }

  // "Tensor<float32, [2, 3], cpu>".
  std::string DebugString() const;

 private:
  Dims dims_;
  int64_t numel_ = 0;
  DataType dtype_ = kFloat32;
  Place place_;
  std::shared_ptr<Allocation> buffer_;
  size_t byte_offset_ = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TENSOR_H_
