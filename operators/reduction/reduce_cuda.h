// Launchers of the reduction kernels (reduce_cuda.cu) on a CUDA stream:
// reduce_sum, reduce_mean, reduce_max, mean and argmax. Plain C++ and CUDA
// runtime types only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_CUDA_H_
#define SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scopeflow {
namespace cuda {

enum class ReduceOp { kSum, kMean, kMax };

// A reduction's input with its axes coalesced as reduce.cc's Coalesce
// does: runs of adjacent axes that are all reduced or all kept, outermost
// first. The output holds the kept runs' elements in the same order.
struct ReduceRuns {
  std::vector<int64_t> sizes;
  std::vector<bool> reduced;
};

// One step of a reduction: [outer, size, inner] reduced along the middle,
// in `splits` chunks of the middle axis first (then their partial results)
// when outer * inner alone cannot keep the device busy.
struct ReduceStep {
  int64_t outer = 1;
  int64_t size = 1;
  int64_t inner = 1;
  int64_t splits = 1;
};

// The steps of a reduction, one per reduced run (the largest first, so
// that intermediate results stay small), and the device workspace they need
// for intermediate and partial results. No steps: nothing is reduced, the
// output is a copy of the input.
struct ReducePlan {
  std::vector<ReduceStep> steps;
  int64_t numel = 0;
  size_t buffer_bytes = 0;   // each of two intermediate buffers
  size_t partial_bytes = 0;  // partial results of split steps
  size_t workspace_bytes = 0;
};

// The plan for reducing `runs` with `op` in dtype T.
template <typename T>
ReducePlan PlanReduce(ReduceOp op, const ReduceRuns& runs);

// out = the reduction of x as `plan` says. Sums accumulate floats in
// double and integers in uint64 (wrapping); kMean divides each sum by
// `count`, the number of elements per output (NaN for 0); kMax propagates
// NaN. `workspace` holds plan.workspace_bytes.
template <typename T>
cudaError_t LaunchReduce(ReduceOp op, const ReducePlan& plan, const T* x,
                         T* out, int64_t count, void* workspace,
                         cudaStream_t stream);

// The plan for argmax along the middle of [outer, size, inner], size >= 1.
ReducePlan PlanArgMax(int64_t outer, int64_t size, int64_t inner);

// out[o, i] = the index along the middle axis of the largest element: the
// first of tied ones (the last with `last`); NaN counts as the largest.
template <typename T>
void LaunchArgMax(const ReducePlan& plan, const T* x, int64_t* out, bool last,
                  void* workspace, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_REDUCTION_REDUCE_CUDA_H_
