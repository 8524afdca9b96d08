// GradientReducer: the in-process all-reduce of data-parallel training on
// CPU threads. Sums N replicas' gradients element by element, always adding
// replica 0, then 1, ... N-1, so the sum is bit-identical however the work
// is split over threads; the elements of all gradients are cut into
// contiguous parts that different threads sum at once.
#ifndef SCOPEFLOW_FRAMEWORK_TRAINING_GRADIENT_REDUCER_H_
#define SCOPEFLOW_FRAMEWORK_TRAINING_GRADIENT_REDUCER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/tensor.h"

namespace scopeflow {

// Ownership: holds views of the replicas' gradients between Start and the
// last ReducePart, and owns the sums (buffers reused from step to step
// while the caller holds no view of them).
//
// Thread safety: Start, then ReducePart for parts 0..parts-1 from any
// threads at once (each part writes its own elements), then sums(); the
// caller orders the three (a thread pool's hand-off does).
class GradientReducer {
 public:
  // Checks that every replica has a float32 CPU gradient of the same shape
  // as replica 0's for each of `names` (errors name the gradient and the
  // replica) and shapes the sums like them. The sums will be
  // scale * (g_0 + g_1 + ... + g_{N-1}).
  absl::Status Start(const std::vector<std::vector<Tensor>>& replica_grads,
                     const std::vector<std::string>& names, float scale);

  // Sums part `part` of `parts` of the elements of every gradient.
  void ReducePart(int part, int parts);

  // Lets go of the replicas' gradients once every part is summed.
  void ReleaseInputs();

  // The sums, in the order of `names`.
  std::vector<Tensor>& sums() { return sums_; }

  // The sums laid end to end, in the order of `names`: sums() are views
  // of it.
  Tensor& flat() { return flat_; }

  // The elements of all gradients together.
  int64_t total_elements() const { return total_; }

 private:
  std::vector<std::vector<Tensor>> replica_grads_;
  Tensor flat_;
  std::vector<Tensor> sums_;
  // Where each gradient's elements start in the concatenation of all.
  std::vector<int64_t> offsets_;
  int64_t total_ = 0;
  float scale_ = 1;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_TRAINING_GRADIENT_REDUCER_H_
