#include "framework/tensor.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "platform/cuda_allocator.h"
#include "platform/device.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The "allocator" of one caller-owned buffer (Tensor::FromExternal): it
// never allocates and frees nothing; the Allocation viewing the buffer holds
// the only reference to it, so it is destroyed with that Allocation, and
// then tells the caller the buffer is free.
class ExternalMemory final : public Allocator {
 public:
  ExternalMemory(const Place& place, std::function<void()> release)
      : Allocator(place), release_(std::move(release)) {}
  ~ExternalMemory() override {
    if (release_) release_();
  }

  // The caller writes its buffer when it likes, unseen.
  bool OwnsMemory() const override { return false; }

 protected:
  absl::StatusOr<void*> AllocateRaw(size_t bytes) override {
    return absl::FailedPreconditionError(
        "external memory cannot allocate more");
  }
  void FreeRaw(void* data, size_t bytes) override {}

 private:
  std::function<void()> release_;
};

}  // namespace

int64_t NumElements(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

std::string DimsToString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

absl::Status Tensor::Allocate(const Place& place, DataType dtype, Dims dims) {
  SF_CHECK(IsValidDataType(dtype), "cannot allocate a tensor of dtype %s",
           DataTypeName(dtype));
  // Overflow is checked by the multiplications themselves: a 64-bit
  // division per dimension cost more than a small op's kernel.
  int64_t count = 1;
  for (int64_t d : dims) {
    SF_CHECK(d >= 0, "cannot allocate a tensor of shape %s: negative dimension",
             DimsToString(dims));
    SF_CHECK(!__builtin_mul_overflow(count, d, &count),
             "cannot allocate a tensor of shape %s: too many elements",
             DimsToString(dims));
  }
  size_t bytes = 0;
  SF_CHECK(!__builtin_mul_overflow(static_cast<size_t>(count), SizeOf(dtype),
                                   &bytes),
           "cannot allocate a tensor of shape %s and dtype %s: too many bytes",
           DimsToString(dims), DataTypeName(dtype));
  const bool reuse = buffer_ != nullptr && place_ == place &&
                     buffer_.use_count() == 1 &&
                     buffer_->size() - byte_offset_ >= bytes;
  if (!reuse) {
    SF_ASSIGN_OR_RETURN(Allocator * allocator, GetAllocator(place));
    SF_ASSIGN_OR_RETURN(buffer_, allocator->Allocate(bytes));
    byte_offset_ = 0;
  }
  // Whoever allocates is about to write: copies kept of the old contents
  // are stale from here on.
  buffer_->MarkWritten();
  dims_ = std::move(dims);
  numel_ = count;
  dtype_ = dtype;
  place_ = place;
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Tensor::FromExternal(void* data, DataType dtype,
                                            Dims dims, const Place& place,
                                            std::function<void()> release) {
  SF_CHECK(IsValidDataType(dtype),
           "cannot wrap external memory as a tensor of dtype %s",
           DataTypeName(dtype));
  int64_t count = 1;
  for (int64_t d : dims) {
    SF_CHECK(d >= 0,
             "cannot wrap external memory as a tensor of shape %s: negative "
             "dimension",
             DimsToString(dims));
    SF_CHECK(d == 0 || count <= INT64_MAX / d,
             "cannot wrap external memory as a tensor of shape %s: too many "
             "elements",
             DimsToString(dims));
    count *= d;
  }
  SF_CHECK(data != nullptr || count == 0,
           "cannot wrap external memory as a tensor of shape %s: the address "
           "is null",
           DimsToString(dims));
  Tensor tensor;
  tensor.buffer_ = std::make_shared<Allocation>(
      data, static_cast<size_t>(count) * SizeOf(dtype),
      std::make_shared<ExternalMemory>(place, std::move(release)));
  tensor.dims_ = std::move(dims);
  tensor.numel_ = count;
  tensor.dtype_ = dtype;
  tensor.place_ = place;
  return tensor;
}

void Tensor::ShareBufferWith(const Tensor& other) { *this = other; }

std::shared_ptr<Allocation> Tensor::ReleaseBuffer() {
  std::shared_ptr<Allocation> buffer;
  if (OwnsBufferAlone()) buffer = std::move(buffer_);
  Clear();
  return buffer;
}

void Tensor::AdoptBuffer(std::shared_ptr<Allocation> spare) {
  Clear();
  place_ = spare->place();
  buffer_ = std::move(spare);
}

absl::StatusOr<Tensor> Tensor::Slice(int64_t begin, int64_t end) const {
  SF_CHECK(rank() >= 1, "cannot slice %s: a scalar has no dimension 0",
           DebugString());
  SF_CHECK(0 <= begin && begin <= end && end <= dims_[0],
           "cannot slice rows [%d, %d) of %s", begin, end, DebugString());
  Tensor slice = *this;
  const int64_t row_elements = dims_[0] == 0 ? 0 : numel_ / dims_[0];
  slice.dims_[0] = end - begin;
  slice.numel_ = row_elements * (end - begin);
  slice.byte_offset_ +=
      static_cast<size_t>(begin * row_elements) * SizeOf(dtype_);
  return slice;
}

absl::Status Tensor::Reshape(Dims dims) {
  int inferred_axis = -1;
  int64_t known = 1;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[i] == -1) {
      SF_CHECK(inferred_axis < 0,
               "cannot reshape %s to %s: more than one dimension is -1",
               DebugString(), DimsToString(dims));
      inferred_axis = i;
      continue;
    }
    SF_CHECK(dims[i] >= 0, "cannot reshape %s to %s: negative dimension",
             DebugString(), DimsToString(dims));
    known *= dims[i];
  }
  if (inferred_axis >= 0) {
    SF_CHECK(known > 0 && numel_ % known == 0,
             "cannot reshape %s to %s: %d elements do not divide evenly",
             DebugString(), DimsToString(dims), numel_);
    dims[inferred_axis] = numel_ / known;
    known = numel_;
  }
  SF_CHECK(known == numel_,
           "cannot reshape %s to %s: %d elements, the new shape holds %d",
           DebugString(), DimsToString(dims), numel_, known);
  dims_ = std::move(dims);
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Tensor::CopyTo(const Place& place) const {
  SF_CHECK_CODE(initialized() || numel_ == 0,
                absl::StatusCode::kFailedPrecondition,
                "cannot copy %s: it has no buffer", DebugString());
  Tensor copy;
  if (place.is_cpu() && place_.is_cuda()) {
    // Out of a device into page-locked memory: the copy runs at full speed
    // with no staging through a driver buffer.
    SF_ASSIGN_OR_RETURN(Allocator * pinned, GetPinnedHostAllocator());
    SF_ASSIGN_OR_RETURN(copy.buffer_, pinned->Allocate(nbytes()));
    copy.buffer_->MarkWritten();
    copy.dims_ = dims_;
    copy.numel_ = numel_;
    copy.dtype_ = dtype_;
    copy.place_ = place;
  } else {
    SF_RETURN_IF_ERROR(copy.Allocate(place, dtype_, dims_));
  }
  SF_RETURN_IF_ERROR(
      CopyBytes(place, copy.raw_data(), place_, raw_data(), nbytes()));
  return copy;
}

absl::Status Tensor::CheckType(DataType dtype) const {
  SF_CHECK_CODE(initialized() || numel_ == 0,
                absl::StatusCode::kFailedPrecondition,
                "tensor %s has no buffer", DebugString());
  SF_CHECK(dtype_ == dtype, "expected a tensor of dtype %s, got %s",
           DataTypeName(dtype), DebugString());
  return absl::OkStatus();
}

std::string Tensor::DebugString() const {
  return absl::StrFormat("Tensor<%s, %s, %s>", DataTypeName(dtype_),
                         DimsToString(dims_), place_.ToString());
}

}  // namespace scopeflow
