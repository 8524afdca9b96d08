// Data-parallel loops for scopeflow's own CPU kernels.
#ifndef SCOPEFLOW_PLATFORM_PARALLEL_H_
#define SCOPEFLOW_PLATFORM_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace scopeflow {

// The threads ParallelFor may use: OpenMP's (OMP_NUM_THREADS), the same
// runtime and threads as oneDNN's kernels, so that a net's pooling and
// copies use the threads its convolutions and products keep waiting
// rather than a second pool competing with them. 1 where the build has no
// OpenMP or inside any OpenMP parallel region (a ParallelFor body
// included).
int MaxParallelThreads();

// Limits the threads of the OpenMP parallel regions the calling thread
// opens, oneDNN's included, to `threads` while it lives (where that is
// below the present limit), and restores the limit after. OpenMP keeps the
// limit per thread: other threads' are not touched. For work too small to
// be worth waking threads for, which a loaded machine makes wait long.
class ScopedMaxThreads {
 public:
  explicit ScopedMaxThreads(int threads);
  ~ScopedMaxThreads();

  ScopedMaxThreads(const ScopedMaxThreads&) = delete;
  ScopedMaxThreads& operator=(const ScopedMaxThreads&) = delete;

 private:
  // The limit to restore; 0 where it was not changed.
  int previous_ = 0;
};

// The fewest elements of an elementwise loop (a few arithmetic operations
// each) worth a thread of their own: below this the cost of waking a
// thread exceeds what it takes over.
inline constexpr int64_t kElementsWorthAThread = int64_t{1} << 14;

// Calls body(begin, end) on contiguous, disjoint ranges that together
// cover [0, n), each on its own thread, and returns when all are done.
// `grain` is the fewest items worth a thread of their own: the ranges
// number at most n / grain (at least one), so small loops run as a single
// call on the calling thread. Ranges may run in any order; the body must
// not depend on it. A ParallelFor inside a body runs on the calling thread.
void ParallelFor(int64_t n, int64_t grain,
                 absl::FunctionRef<void(int64_t begin, int64_t end)> body);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_PARALLEL_H_
