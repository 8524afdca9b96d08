#include "platform/parallel.h"

#include <algorithm>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace scopeflow {

int MaxParallelThreads() {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
  return omp_get_max_threads();
#else
  return 1;
#endif
}

ScopedMaxThreads::ScopedMaxThreads(int threads) {
#ifdef _OPENMP
  const int present = omp_get_max_threads();
  if (threads >= 1 && threads < present) {
    previous_ = present;
    omp_set_num_threads(threads);
  }
#endif
}

ScopedMaxThreads::~ScopedMaxThreads() {
#ifdef _OPENMP
  if (previous_ > 0) omp_set_num_threads(previous_);
#endif
}

void ParallelFor(int64_t n, int64_t grain,
                 absl::FunctionRef<void(int64_t begin, int64_t end)> body) {
  if (n <= 0) return;
  const int64_t most_ranges =
      std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int ranges =
      static_cast<int>(std::min<int64_t>(most_ranges, MaxParallelThreads()));
  if (ranges == 1) {
    body(0, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(ranges)
  {
    // The runtime may grant fewer threads than asked; the ranges follow
    // the team it gave.
    const int64_t team = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t begin = n * t / team;
    const int64_t end = n * (t + 1) / team;
    if (begin < end) body(begin, end);
  }
#endif
}

}  // namespace scopeflow
