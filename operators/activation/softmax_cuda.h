// Launchers of the softmax kernels (softmax_cuda.cu) on a CUDA stream, for
// a tensor seen as [outer, size, inner] around the softmax axis. Plain C++
// and CUDA runtime types only, so both nvcc and the C++ compiler read it.
#ifndef SCOPEFLOW_OPERATORS_ACTIVATION_SOFTMAX_CUDA_H_
#define SCOPEFLOW_OPERATORS_ACTIVATION_SOFTMAX_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// y = softmax (or, with `log`, log_softmax) of x along the middle axis;
// size >= 1. y may be x.
template <typename T>
void LaunchSoftmax(bool log, const T* x, T* y, int64_t outer, int64_t size,
                   int64_t inner, cudaStream_t stream);

// From the forward's output y and its gradient g: softmax's
// dx = y (g - sum(g y)), or with `log` log_softmax's dx = g - exp(y) sum(g),
// the sums along the middle axis; size >= 1.
template <typename T>
void LaunchSoftmaxGrad(bool log, const T* y, const T* g, T* dx, int64_t outer,
                       int64_t size, int64_t inner, cudaStream_t stream);

// softmax_with_cross_entropy over `rows` contiguous rows of `classes` >= 1
// logits: softmax[r] the row's softmax and loss[r] = log(sum(exp(x[r] -
// max))) - (x[r, labels[r]] - max), NaN where labels[r] is outside
// [0, classes) (the op's adapter reports such a label through a device
// check, and the run fails).
template <typename T>
void LaunchSoftmaxCrossEntropy(const T* x, const int64_t* labels, T* softmax,
                               T* loss, int64_t rows, int64_t classes,
                               cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACTIVATION_SOFTMAX_CUDA_H_
