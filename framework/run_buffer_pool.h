// Buffers of a run's dead temporaries, handed to the outputs of later ops
// of the same run.
#ifndef SCOPEFLOW_FRAMEWORK_RUN_BUFFER_POOL_H_
#define SCOPEFLOW_FRAMEWORK_RUN_BUFFER_POOL_H_

#include <array>
#include <cstddef>
#include <memory>
#include <utility>

#include "framework/tensor.h"
#include "platform/allocator.h"

namespace scopeflow {

// A net of small tensors allocates an output and frees a dead temporary at
// nearly every op, and going through the allocator each time (the
// allocation's bookkeeping object, the allocator's counters, the thread's
// block cache) costs more than the kernel of such an op. Within one run on
// the host, a dead temporary's buffer is handed straight to a later output
// of about its size instead.
//
// Only small buffers are kept (a large one is better returned at once, and
// its allocation costs little next to its kernel), at most kMostKept of
// them, and only host buffers of scopeflow's own memory that no other
// tensor views (never memory a caller lent). The pool belongs to one run on
// one thread; what it holds returns to the allocator when it is destroyed
// at the end of the run.
class RunBufferPool {
 public:
  static constexpr size_t kMostBytes = 4096;
  static constexpr size_t kMostKept = 8;

  // Takes `dead`'s buffer if it is worth keeping; `dead` is empty after.
  void Keep(Tensor& dead) {
    const Allocation* buffer = dead.buffer();
    if (kept_ == kMostKept || buffer == nullptr || buffer->size() == 0 ||
        buffer->size() > kMostBytes || !buffer->place().is_cpu() ||
        !buffer->tracks_writes()) {
      dead.Clear();
      return;
    }
    std::shared_ptr<Allocation> released = dead.ReleaseBuffer();
    if (released != nullptr) buffers_[kept_++] = std::move(released);
  }

  // Gives `out`, which holds no buffer, a kept buffer of `bytes` to
  // `2 * bytes` bytes, for its Allocate to reuse. False if none fits.
  bool Lend(size_t bytes, Tensor& out) {
    for (size_t i = 0; i < kept_; ++i) {
      const size_t size = buffers_[i]->size();
      if (size >= bytes && size <= 2 * bytes) {
        out.AdoptBuffer(std::move(buffers_[i]));
        --kept_;
        if (i != kept_) buffers_[i] = std::move(buffers_[kept_]);
        return true;
      }
    }
    return false;
  }

 private:
  std::array<std::shared_ptr<Allocation>, kMostKept> buffers_;
  size_t kept_ = 0;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_RUN_BUFFER_POOL_H_
