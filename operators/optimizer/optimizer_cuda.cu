#include <cstdint>

#include "operators/optimizer/optimizer_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

__device__ double Read(ScalarIn s) {
  switch (s.type) {
    case ScalarType::kFloat64:
      return *static_cast<const double*>(s.data);
    case ScalarType::kInt32:
      return *static_cast<const int32_t*>(s.data);
    case ScalarType::kInt64:
      return static_cast<double>(*static_cast<const int64_t*>(s.data));
    case ScalarType::kFloat32:
      break;
  }
  return *static_cast<const float*>(s.data);
}

__device__ void Write(ScalarOut s, double value) {
  switch (s.type) {
    case ScalarType::kFloat64:
      *static_cast<double*>(s.data) = value;
      return;
    case ScalarType::kInt32:
      *static_cast<int32_t*>(s.data) = static_cast<int32_t>(value);
      return;
    case ScalarType::kInt64:
      *static_cast<int64_t*>(s.data) = static_cast<int64_t>(value);
      return;
    case ScalarType::kFloat32:
      break;
  }
  *static_cast<float*>(s.data) = static_cast<float>(value);
}

template <typename T>
__global__ void SgdKernel(const T* p, const T* g, ScalarIn lr, T* p_out,
                          int64_t n) {
  const T rate = static_cast<T>(Read(lr));
  SF_CUDA_GRID_LOOP(i, n) { p_out[i] = p[i] - rate * g[i]; }
}

template <typename T>
__global__ void MomentumKernel(const T* p, const T* g, const T* v, ScalarIn lr,
                               T mu, bool nesterov, T* p_out, T* v_out,
                               int64_t n) {
  const T rate = static_cast<T>(Read(lr));
  SF_CUDA_GRID_LOOP(i, n) {
    const T velocity = mu * v[i] + g[i];
    v_out[i] = velocity;
    p_out[i] = nesterov ? p[i] - rate * (g[i] + mu * velocity)
                        : p[i] - rate * velocity;
  }
}

__device__ bool ValidPower(double power) { return power >= 0 && power < 1; }

__device__ bool ValidPowers(double beta1_pow, double beta2_pow) {
  return ValidPower(beta1_pow) && ValidPower(beta2_pow);
}

// Writes `value` into a device check slot (DeviceCheckSlot in
// platform/cuda_runtime.h). INT64_MIN means "no failure" there, so that one
// value is reported as INT64_MIN + 1 rather than lost.
__device__ void ReportBad(int64_t* bad, int64_t value) {
  *bad = value == INT64_MIN ? INT64_MIN + 1 : value;
}

// A bad power for its check slot: rounded down, NaN and values from 2^63
// up as INT64_MAX, values from -2^63 down as INT64_MIN + 1 (never the
// slot's INT64_MIN).
__device__ int64_t RoundedDown(double x) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(x < kTwoTo63)) return INT64_MAX;
  if (x <= -kTwoTo63) return INT64_MIN + 1;
  return static_cast<int64_t>(floor(x));
}

// The per-step constants are computed in double as on the CPU, once per
// thread.
template <typename T>
__global__ void AdamKernel(const T* p, const T* g, const T* m, const T* v,
                           ScalarIn lr_in, ScalarIn beta1_pow_in,
                           ScalarIn beta2_pow_in, AdamConfig config, T* p_out,
                           T* m_out, T* v_out, int64_t n) {
  const double lr = Read(lr_in);
  const double beta1_pow = Read(beta1_pow_in);
  const double beta2_pow = Read(beta2_pow_in);
  if (!ValidPowers(beta1_pow, beta2_pow)) return;
  const T b1 = static_cast<T>(config.beta1);
  const T b2 = static_cast<T>(config.beta2);
  const T eps = static_cast<T>(config.epsilon);
  const T decay = static_cast<T>(1 - lr * config.weight_decay);
  const T step_size = static_cast<T>(lr / (1 - beta1_pow));
  const T sqrt_correction2 = static_cast<T>(sqrt(1 - beta2_pow));
  SF_CUDA_GRID_LOOP(i, n) {
    const T grad = g[i];
    const T moment1 = b1 * m[i] + (1 - b1) * grad;
    const T moment2 = b2 * v[i] + (1 - b2) * grad * grad;
    m_out[i] = moment1;
    v_out[i] = moment2;
    const T denom = sqrt(moment2) / sqrt_correction2 + eps;
    p_out[i] = p[i] * decay - step_size * moment1 / denom;
  }
}

// Also reports a bad power: one thread, where AdamKernel has many.
__global__ void AdamPowersKernel(ScalarIn beta1_pow_in, ScalarIn beta2_pow_in,
                                 double beta1, double beta2,
                                 ScalarOut beta1_pow_out,
                                 ScalarOut beta2_pow_out,
                                 int64_t* bad_beta1_pow,
                                 int64_t* bad_beta2_pow) {
  const double beta1_pow = Read(beta1_pow_in);
  const double beta2_pow = Read(beta2_pow_in);
  if (!ValidPower(beta1_pow)) *bad_beta1_pow = RoundedDown(beta1_pow);
  if (!ValidPower(beta2_pow)) *bad_beta2_pow = RoundedDown(beta2_pow);
  if (!ValidPowers(beta1_pow, beta2_pow)) return;
  Write(beta1_pow_out, beta1_pow * beta1);
  Write(beta2_pow_out, beta2_pow * beta2);
}

template <typename T>
__global__ void IncrementKernel(const T* x, T step, T* out) {
  *out = *x + step;
}

// std::max's choice, which NaNs reach as the CPU's do.
__device__ double Max(double a, double b) { return a < b ? b : a; }

__global__ void LrScheduleKernel(const int64_t* step_in, LrSchedule s,
                                 float* rate, int64_t* bad) {
  constexpr double kPi = 3.14159265358979323846;
  const int64_t step = *step_in;
  double lr = s.base_lr;
  if (step < 0) {
    lr = nan("");
    ReportBad(bad, step);
  } else if (step < s.warmup_steps) {
    lr = s.base_lr * static_cast<double>(step + 1) /
         static_cast<double>(s.warmup_steps);
  } else {
    const int64_t t = step - s.warmup_steps;
    switch (s.policy) {
      case LrPolicy::kStep:
        lr =
            Max(s.min_lr,
                s.base_lr * pow(s.gamma, static_cast<double>(t / s.step_size)));
        break;
      case LrPolicy::kExponential:
        lr = Max(s.min_lr, s.base_lr * pow(s.gamma, static_cast<double>(t)));
        break;
      case LrPolicy::kCosine: {
        const double progress =
            static_cast<double>(t < s.total_steps ? t : s.total_steps) /
            static_cast<double>(s.total_steps);
        lr =
            s.min_lr + (s.base_lr - s.min_lr) * 0.5 * (1 + cos(kPi * progress));
        break;
      }
      case LrPolicy::kConstant:
        break;
    }
  }
  *rate = static_cast<float>(lr);
}

constexpr int kMaxSumSquaresBlocks = 1024;

// The sum over a block of kCudaThreads threads, in thread 0.
__device__ double BlockSum(double v) {
  __shared__ double warps[kCudaThreads / 32];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kCudaThreads / 32 ? warps[threadIdx.x] : 0.0;
  if (threadIdx.x < 32) {
#pragma unroll
    for (int offset = kCudaThreads / 64; offset > 0; offset /= 2) {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
  }
  return v;
}

template <typename T>
__global__ void SumSquaresKernel(const T* x, int64_t n, double* partial) {
  double sum = 0;
  SF_CUDA_GRID_LOOP(i, n) {
    const double value = static_cast<double>(x[i]);
    sum += value * value;
  }
  sum = BlockSum(sum);
  if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

template <typename T>
__global__ void GlobalNormKernel(const double* partial, int64_t count,
                                 double* norm, T* global_norm) {
  double sum = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) sum += partial[i];
  sum = BlockSum(sum);
  if (threadIdx.x == 0) {
    *norm = sqrt(sum);
    if (global_norm != nullptr) *global_norm = static_cast<T>(*norm);
  }
}

template <typename T>
__global__ void ClipScaleKernel(const T* x, T* out, int64_t n,
                                const double* norm_in, double max_norm) {
  const double norm = *norm_in;
  // max_norm / max(norm, max_norm), 1 for an infinite max_norm.
  const double scale = norm > max_norm ? max_norm / norm : 1.0;
  SF_CUDA_GRID_LOOP(i, n) { out[i] = static_cast<T>(x[i] * scale); }
}

}  // namespace

template <typename T>
void LaunchSgd(const T* p, const T* g, ScalarIn lr, T* p_out, int64_t n,
               cudaStream_t stream) {
  if (n == 0) return;
  SgdKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(p, g, lr, p_out, n);
}

template <typename T>
void LaunchMomentum(const T* p, const T* g, const T* v, ScalarIn lr, T mu,
                    bool nesterov, T* p_out, T* v_out, int64_t n,
                    cudaStream_t stream) {
  if (n == 0) return;
  MomentumKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
      p, g, v, lr, mu, nesterov, p_out, v_out, n);
}

template <typename T>
void LaunchAdam(const T* p, const T* g, const T* m, const T* v, ScalarIn lr,
                ScalarIn beta1_pow, ScalarIn beta2_pow,
                const AdamConfig& config, T* p_out, T* m_out, T* v_out,
                ScalarOut beta1_pow_out, ScalarOut beta2_pow_out, int64_t n,
                int64_t* bad_beta1_pow, int64_t* bad_beta2_pow,
                cudaStream_t stream) {
  if (n > 0) {
    AdamKernel<T><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
        p, g, m, v, lr, beta1_pow, beta2_pow, config, p_out, m_out, v_out, n);
  }
  AdamPowersKernel<<<1, 1, 0, stream>>>(
      beta1_pow, beta2_pow, config.beta1, config.beta2, beta1_pow_out,
      beta2_pow_out, bad_beta1_pow, bad_beta2_pow);
}

template <typename T>
void LaunchIncrement(const T* x, T step, T* out, cudaStream_t stream) {
  IncrementKernel<T><<<1, 1, 0, stream>>>(x, step, out);
}

void LaunchLrSchedule(const int64_t* step, const LrSchedule& schedule,
                      float* rate, int64_t* bad, cudaStream_t stream) {
  LrScheduleKernel<<<1, 1, 0, stream>>>(step, schedule, rate, bad);
}

int SumSquaresBlocks(int64_t n) {
  if (n == 0) return 0;
  const unsigned blocks = CudaBlocks(n);
  return blocks < kMaxSumSquaresBlocks ? static_cast<int>(blocks)
                                       : kMaxSumSquaresBlocks;
}

template <typename T>
void LaunchSumSquares(const T* x, int64_t n, double* partial,
                      cudaStream_t stream) {
  const int blocks = SumSquaresBlocks(n);
  if (blocks == 0) return;
  SumSquaresKernel<T><<<blocks, kCudaThreads, 0, stream>>>(x, n, partial);
}

template <typename T>
void LaunchGlobalNorm(const double* partial, int64_t count, double* norm,
                      T* global_norm, cudaStream_t stream) {
  GlobalNormKernel<T>
      <<<1, kCudaThreads, 0, stream>>>(partial, count, norm, global_norm);
}

template <typename T>
void LaunchClipScale(const T* x, T* out, int64_t n, const double* norm,
                     double max_norm, cudaStream_t stream) {
  if (n == 0) return;
  ClipScaleKernel<T>
      <<<CudaBlocks(n), kCudaThreads, 0, stream>>>(x, out, n, norm, max_norm);
}

#define SF_INSTANTIATE_FLOAT(T)                                                \
  template void LaunchSgd<T>(const T*, const T*, ScalarIn, T*, int64_t,        \
                             cudaStream_t);                                    \
  template void LaunchMomentum<T>(const T*, const T*, const T*, ScalarIn, T,   \
                                  bool, T*, T*, int64_t, cudaStream_t);        \
  template void LaunchAdam<T>(const T*, const T*, const T*, const T*,          \
                              ScalarIn, ScalarIn, ScalarIn, const AdamConfig&, \
                              T*, T*, T*, ScalarOut, ScalarOut, int64_t,       \
                              int64_t*, int64_t*, cudaStream_t);               \
  template void LaunchSumSquares<T>(const T*, int64_t, double*, cudaStream_t); \
  template void LaunchGlobalNorm<T>(const double*, int64_t, double*, T*,       \
                                    cudaStream_t);                             \
  template void LaunchClipScale<T>(const T*, T*, int64_t, const double*,       \
                                   double, cudaStream_t);
SF_INSTANTIATE_FLOAT(float)
SF_INSTANTIATE_FLOAT(double)
#undef SF_INSTANTIATE_FLOAT

template void LaunchIncrement<float>(const float*, float, float*, cudaStream_t);
template void LaunchIncrement<double>(const double*, double, double*,
                                      cudaStream_t);
template void LaunchIncrement<int32_t>(const int32_t*, int32_t, int32_t*,
                                       cudaStream_t);
template void LaunchIncrement<int64_t>(const int64_t*, int64_t, int64_t*,
                                       cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
