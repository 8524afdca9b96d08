// Launchers of the CUDA kernels of the optimizer ops (optimizer_cuda.cu).
// Plain C++ and CUDA runtime types only, so both nvcc and the C++ compiler
// read it.
//
// Learning rates, powers of beta and step counters live on the device,
// where the previous op of the training net wrote them: the kernels read
// them there rather than stall the stream to bring them to the host.
#ifndef SCOPEFLOW_OPERATORS_OPTIMIZER_OPTIMIZER_CUDA_H_
#define SCOPEFLOW_OPERATORS_OPTIMIZER_OPTIMIZER_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

// The dtypes update_util.h's ReadScalar and WriteScalar handle.
enum class ScalarType { kFloat32, kFloat64, kInt32, kInt64 };

// The one element of a device tensor, read (as a double) by a kernel.
struct ScalarIn {
  const void* data = nullptr;
  ScalarType type = ScalarType::kFloat32;
};

// The one element of a device tensor, written by a kernel.
struct ScalarOut {
  void* data = nullptr;
  ScalarType type = ScalarType::kFloat32;
};

// p_out = p - lr * g.
template <typename T>
void LaunchSgd(const T* p, const T* g, ScalarIn lr, T* p_out, int64_t n,
               cudaStream_t stream);

// velocity = mu * v + g; p_out = p - lr * velocity, or with nesterov
// p - lr * (g + mu * velocity).
template <typename T>
void LaunchMomentum(const T* p, const T* g, const T* v, ScalarIn lr, T mu,
                    bool nesterov, T* p_out, T* v_out, int64_t n,
                    cudaStream_t stream);

struct AdamConfig {
  double beta1, beta2, epsilon, weight_decay;
};

// One AdamW step as optimizers.cc's, then beta1_pow_out = beta1_pow * beta1
// and beta2_pow_out = beta2_pow * beta2 (after every element is updated,
// as the outputs may be the inputs). A power outside [0, 1) leaves
// everything unchanged and is written, rounded down to an int64 (NaN as
// INT64_MAX), to its device check slot (DeviceCheckSlot in
// platform/cuda_runtime.h): `bad_beta1_pow` or `bad_beta2_pow`.
template <typename T>
void LaunchAdam(const T* p, const T* g, const T* m, const T* v, ScalarIn lr,
                ScalarIn beta1_pow, ScalarIn beta2_pow,
                const AdamConfig& config, T* p_out, T* m_out, T* v_out,
                ScalarOut beta1_pow_out, ScalarOut beta2_pow_out, int64_t n,
                int64_t* bad_beta1_pow, int64_t* bad_beta2_pow,
                cudaStream_t stream);

// out[0] = x[0] + step.
template <typename T>
void LaunchIncrement(const T* x, T step, T* out, cudaStream_t stream);

enum class LrPolicy { kConstant, kStep, kExponential, kCosine };

struct LrSchedule {
  LrPolicy policy;
  double base_lr, min_lr, gamma;
  int64_t step_size, total_steps, warmup_steps;
};

// *rate = the learning rate at *step, as lr_schedule.cc's LearningRateAt;
// NaN for a negative step, which is written to the device check slot `bad`.
void LaunchLrSchedule(const int64_t* step, const LrSchedule& schedule,
                      float* rate, int64_t* bad, cudaStream_t stream);

// clip_by_global_norm runs LaunchSumSquares on each X (partial sums of
// squares, in double), LaunchGlobalNorm over all the partials, then
// LaunchClipScale on each X.

// The partial sums LaunchSumSquares writes for n elements (0 for none).
int SumSquaresBlocks(int64_t n);

template <typename T>
void LaunchSumSquares(const T* x, int64_t n, double* partial,
                      cudaStream_t stream);

// *norm = sqrt(sum of partial[0, count)), added in a fixed order; also
// *global_norm = norm as T where it is not null.
template <typename T>
void LaunchGlobalNorm(const double* partial, int64_t count, double* norm,
                      T* global_norm, cudaStream_t stream);

// out = x * max_norm / norm where norm > max_norm, else x.
template <typename T>
void LaunchClipScale(const T* x, T* out, int64_t n, const double* norm,
                     double max_norm, cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_OPTIMIZER_OPTIMIZER_CUDA_H_
