// Launchers of the kernels of accuracy, softmax_with_cross_entropy's label
// check and softmax_with_cross_entropy_grad (classification_cuda.cu) on a CUDA
// stream. Plain C++ and CUDA runtime types only, so both nvcc and the C++
// compiler read it.
#ifndef SCOPEFLOW_OPERATORS_REDUCTION_CLASSIFICATION_CUDA_H_
#define SCOPEFLOW_OPERATORS_REDUCTION_CLASSIFICATION_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// accuracy[0] = the fraction of the n rows whose predicted index equals
// their label (0 for no rows), divided in double.
void LaunchAccuracy(const int64_t* predicted, const int64_t* labels, int64_t n,
                    float* accuracy, cudaStream_t stream);

// Writes a label of the `rows` that is outside [0, classes) to `bad`, a
// device check slot (DeviceCheckSlot in platform/cuda_runtime.h): for
// softmax_with_cross_entropy, whose kernels give such a row a NaN loss.
void LaunchCheckLabels(const int64_t* labels, int64_t rows, int64_t classes,
                       int64_t* bad, cudaStream_t stream);

// dx[r, c] = softmax[r, c] * g[r], minus g[r] at c = labels[r], over
// `rows` rows of `classes`. A row whose label is outside [0, classes) gets
// NaN, and the label is written to the device check slot `bad`.
template <typename T>
void LaunchSoftmaxCrossEntropyGrad(const T* softmax, const int64_t* labels,
                                   const T* g, T* dx, int64_t rows,
                                   int64_t classes, int64_t* bad,
                                   cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_REDUCTION_CLASSIFICATION_CUDA_H_
