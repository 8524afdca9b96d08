// Launchers of the activation kernels (activation_cuda.cu) on a CUDA
// stream. Plain C++ and CUDA runtime types only, so both nvcc and the C++
// compiler read it.
#ifndef SCOPEFLOW_OPERATORS_ACTIVATION_ACTIVATION_CUDA_H_
#define SCOPEFLOW_OPERATORS_ACTIVATION_ACTIVATION_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// The elementwise activations; kGeluTanh is gelu with "approximate".
enum class Activation {
  kRelu,
  kLeakyRelu,
  kElu,
  kSigmoid,
  kTanh,
  kGelu,
  kGeluTanh,
};

// out[i] = f(x[i]) for i < n. `alpha` is the attribute of leaky_relu and
// elu (ignored by the others).
template <typename T>
void LaunchActivation(Activation f, T alpha, const T* x, T* out, int64_t n,
                      cudaStream_t stream);

// x_grad[i] = f'(...) * out_grad[i], from `value` (Out or X, as the CPU
// kernel of the op reads).
template <typename T>
void LaunchActivationGrad(Activation f, T alpha, const T* value,
                          const T* out_grad, T* x_grad, int64_t n,
                          cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ACTIVATION_ACTIVATION_CUDA_H_
