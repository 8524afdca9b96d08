#include <algorithm>
#include <cstdint>

#include "operators/nn/batch_norm_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarps = kCudaThreads / 32;
// The elements of a row one warp of SumRowsKernel takes at once.
constexpr int64_t kSegment = 1024;
// About the blocks an H100 holds at once: the per-channel sums are split
// into at least that many where the data allows.
constexpr int64_t kTargetBlocks = 1024;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) {
  return std::max(lo, std::min(v, hi));
}

// The per-channel sums are taken in two steps: blocks write partial sums,
// then a warp per channel adds its `per_channel` partials up. Partial t of
// channel c lies at (t / group) * stride + c * group + t % group. Channels
// with many values per row (inner >= 32) go by rows, a warp reading a
// contiguous stretch of a row (a block per channel and split); the others
// by columns of X seen as [batch, channels * inner], a thread per column
// and split of the batch, so that a warp reads 32 contiguous values.
struct Partition {
  bool by_rows = false;
  int64_t blocks_x = 0;
  int64_t blocks_y = 0;
  int64_t per_channel = 0;
  int64_t group = 1;
  int64_t stride = 0;
  int64_t partials = 0;
};

Partition PartitionOf(const BatchNormShape& s) {
  Partition p;
  if (s.batch * s.inner == 0 || s.channels == 0) return p;
  p.by_rows = s.inner >= 32;
  if (p.by_rows) {
    const int64_t units = s.batch * CeilDiv(s.inner, kSegment);
    p.blocks_x =
        Clamp(CeilDiv(kTargetBlocks, s.channels), 1, CeilDiv(units, kWarps));
    p.blocks_y = std::min<int64_t>(s.channels, 65535);
    p.per_channel = p.group = p.blocks_x;
    p.stride = s.channels * p.blocks_x;
  } else {
    const int64_t columns = s.channels * s.inner;
    p.blocks_x = CeilDiv(columns, 32);
    p.blocks_y = Clamp(CeilDiv(kTargetBlocks, p.blocks_x), 1,
                       std::min<int64_t>(65535, CeilDiv(s.batch, kWarps)));
    p.per_channel = p.blocks_y * s.inner;
    p.group = s.inner;
    p.stride = columns;
  }
  p.partials = p.per_channel * s.channels;
  return p;
}

// Workspace: the partial sums (up to 3 per partial), then per channel five
// doubles and two T coefficients (in double slots).
constexpr int kMaxSums = 3;
constexpr int kChannelSlots = 7;

template <typename I>
struct Shape {
  I batch, channels, inner;
};

template <typename I>
Shape<I> ShapeIn(const BatchNormShape& s) {
  return {static_cast<I>(s.batch), static_cast<I>(s.channels),
          static_cast<I>(s.inner)};
}

bool FitsInt32(const BatchNormShape& s) {
  return s.batch * s.channels * s.inner <= (int64_t{1} << 30);
}

template <typename I>
__device__ I GlobalThread() {
  return static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) +
         static_cast<I>(threadIdx.x);
}

template <typename I>
__device__ I GridThreads() {
  return static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
}

// Products the compiler may not fuse into a following addition: the CPU
// kernel rounds them on their own.
__device__ float MulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ double MulRn(double a, double b) { return __dmul_rn(a, b); }

// Lane 0 gets the warp's sums.
template <int K>
__device__ void WarpSum(double (&acc)[K]) {
  for (int offset = 16; offset > 0; offset /= 2) {
    for (int k = 0; k < K; ++k) {
      acc[k] += __shfl_down_sync(kFullMask, acc[k], offset);
    }
  }
}

// Partial sums of Terms over each channel's values by rows: block
// (x, y) takes channels y, y + gridDim.y, ... and of each the units (a
// sample's stretch of kSegment values) x * kWarps + warp, ... .
template <typename I, int K, typename Terms>
__global__ void SumRowsKernel(Shape<I> s, I segments, Terms terms,
                              double* partials) {
  __shared__ double shared[kWarps][K];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const I units = s.batch * segments;
  for (I c = blockIdx.y; c < s.channels; c += gridDim.y) {
    const typename Terms::Channel channel = terms.At(c);
    double acc[K] = {};
    for (I u = static_cast<I>(blockIdx.x) * kWarps + warp; u < units;
         u += static_cast<I>(gridDim.x) * kWarps) {
      const I n = u / segments;
      const I begin = (u - n * segments) * static_cast<I>(kSegment);
      const I end = min(s.inner, begin + static_cast<I>(kSegment));
      const I base = (n * s.channels + c) * s.inner;
      for (I i = begin + lane; i < end; i += 32) {
        terms.Add(channel, base + i, acc);
      }
    }
    WarpSum<K>(acc);
    if (lane == 0) {
      for (int k = 0; k < K; ++k) shared[warp][k] = acc[k];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const int64_t at = int64_t{c} * gridDim.x + blockIdx.x;
      for (int k = 0; k < K; ++k) {
        double total = 0;
        for (int w = 0; w < kWarps; ++w) total += shared[w][k];
        partials[at * K + k] = total;
      }
    }
    __syncthreads();
  }
}

// Partial sums of Terms by columns: blocks of 32 x kWarps threads, thread
// (x, y) of block (bx, by) taking column bx * 32 + x over the samples
// by * kWarps + y, ... .
template <typename I, int K, typename Terms>
__global__ void SumColumnsKernel(Shape<I> s, Terms terms, double* partials) {
  __shared__ double shared[kWarps][32][K];
  const I columns = s.channels * s.inner;
  const I m = static_cast<I>(blockIdx.x) * 32 + threadIdx.x;
  double acc[K] = {};
  if (m < columns) {
    const typename Terms::Channel channel = terms.At(m / s.inner);
    for (I n = static_cast<I>(blockIdx.y) * kWarps + threadIdx.y; n < s.batch;
         n += static_cast<I>(gridDim.y) * kWarps) {
      terms.Add(channel, n * columns + m, acc);
    }
  }
  for (int k = 0; k < K; ++k) shared[threadIdx.y][threadIdx.x][k] = acc[k];
  __syncthreads();
  if (threadIdx.y != 0 || m >= columns) return;
  const int64_t at = int64_t{blockIdx.y} * columns + m;
  for (int k = 0; k < K; ++k) {
    double total = 0;
    for (int y = 0; y < kWarps; ++y) total += shared[y][threadIdx.x][k];
    partials[at * K + k] = total;
  }
}

// A warp per channel adds up the channel's partials and lane 0 hands the
// sums to `epilogue`.
template <int K, typename Epilogue>
__global__ void FinalizeKernel(Partition p, int64_t channels,
                               const double* partials, Epilogue epilogue) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / 32);
  for (int64_t c = (int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
       c < channels; c += warps) {
    double acc[K] = {};
    for (int64_t t = lane; t < p.per_channel; t += 32) {
      const int64_t at = (t / p.group) * p.stride + c * p.group + t % p.group;
      for (int k = 0; k < K; ++k) acc[k] += partials[at * K + k];
    }
    WarpSum<K>(acc);
    if (lane == 0) epilogue(c, acc);
  }
}

template <typename I, int K, typename Terms, typename Epilogue>
void SumPerChannel(const BatchNormShape& shape, Terms terms, Epilogue epilogue,
                   double* partials, cudaStream_t stream) {
  const Partition p = PartitionOf(shape);
  if (p.per_channel > 0) {
    const Shape<I> s = ShapeIn<I>(shape);
    const dim3 grid(static_cast<unsigned>(p.blocks_x),
                    static_cast<unsigned>(p.blocks_y));
    if (p.by_rows) {
      SumRowsKernel<I, K><<<grid, kCudaThreads, 0, stream>>>(
          s, static_cast<I>(CeilDiv(shape.inner, kSegment)), terms, partials);
    } else {
      SumColumnsKernel<I, K>
          <<<grid, dim3(32, kWarps), 0, stream>>>(s, terms, partials);
    }
  }
  FinalizeKernel<K>
      <<<CudaBlocks(shape.channels * 32), kCudaThreads, 0, stream>>>(
          p, shape.channels, partials, epilogue);
}

// The batch's sums: of X, and of X less the channel's first value and its
// square, from which the variance follows without the cancellation that
// plain sums of squares suffer (the shift is one of the values, so the
// error stays within a few ulps of double times the channel's size).
template <typename T, typename I>
struct StatisticsTerms {
  struct Channel {
    double shift;
  };
  const T* x;
  I inner;

  __device__ Channel At(I c) const {
    return {static_cast<double>(x[c * inner])};
  }
  __device__ void Add(const Channel& channel, I e, double* acc) const {
    const double v = x[e];
    const double d = v - channel.shift;
    acc[0] += v;
    acc[1] += d;
    acc[2] += d * d;
  }
};

// Y = X * a + b per channel, a = scale * inv_std and b = bias - mean * a
// rounded to T from double, as the CPU kernel folds them.
template <typename T>
__device__ void Coefficients(T scale, T bias, double mean, double inv_std, T& a,
                             T& b) {
  const double product = static_cast<double>(scale) * inv_std;
  a = static_cast<T>(product);
  b = static_cast<T>(static_cast<double>(bias) - __dmul_rn(mean, product));
}

// Training: the biased variance normalizes, and the running statistics
// move towards the batch's, momentum * running + (1 - momentum) * batch.
template <typename T>
struct TrainingEpilogue {
  BatchNormTensors<T> t;
  double count, epsilon, momentum;
  T* a;
  T* b;

  __device__ void operator()(int64_t c, const double (&sum)[3]) const {
    const double mean = sum[0] / count;
    const double shifted = sum[1] / count;
    double variance = sum[2] / count - shifted * shifted;
    if (variance < 0) variance = 0;  // rounding only; NaN stays
    const double inv_std = 1.0 / sqrt(variance + epsilon);
    Coefficients(t.scale[c], t.bias[c], mean, inv_std, a[c], b[c]);
    // Read before written: MeanOut may be Mean itself.
    const double running_mean = t.mean[c];
    const double running_variance = t.variance[c];
    t.mean_out[c] = static_cast<T>(__dmul_rn(momentum, running_mean) +
                                   __dmul_rn(1 - momentum, mean));
    t.variance_out[c] = static_cast<T>(__dmul_rn(momentum, running_variance) +
                                       __dmul_rn(1 - momentum, variance));
    if (t.saved_mean != nullptr) t.saved_mean[c] = static_cast<T>(mean);
    if (t.saved_variance != nullptr) {
      t.saved_variance[c] = static_cast<T>(inv_std);
    }
  }
};

// Inference: the running statistics normalize; the bound outputs of the
// other slots get what the CPU kernel leaves there.
template <typename T>
__global__ void InferenceChannelsKernel(BatchNormTensors<T> t, int64_t channels,
                                        double epsilon, T* a, T* b) {
  SF_CUDA_GRID_LOOP(c, channels) {
    const T mean = t.mean[c];
    const T variance = t.variance[c];
    const double inv_std = 1.0 / sqrt(variance + epsilon);
    Coefficients(t.scale[c], t.bias[c], static_cast<double>(mean), inv_std,
                 a[c], b[c]);
    if (t.mean_out != nullptr) t.mean_out[c] = mean;
    if (t.variance_out != nullptr) t.variance_out[c] = variance;
    if (t.saved_mean != nullptr) t.saved_mean[c] = mean;
    if (t.saved_variance != nullptr) {
      t.saved_variance[c] = static_cast<T>(inv_std);
    }
  }
}

template <typename T, typename I>
__global__ void NormalizeKernel(const T* x, const T* a, const T* b, Shape<I> s,
                                I n, T* y) {
  for (I e = GlobalThread<I>(); e < n; e += GridThreads<I>()) {
    const I c = e / s.inner % s.channels;
    y[e] = MulRn(x[e], a[c]) + b[c];
  }
}

template <typename T, typename I>
void Normalize(const BatchNormShape& shape, const T* x, const T* a, const T* b,
               T* y, cudaStream_t stream) {
  const int64_t n = shape.batch * shape.channels * shape.inner;
  if (n == 0) return;
  NormalizeKernel<T, I><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
      x, a, b, ShapeIn<I>(shape), static_cast<I>(n), y);
}

// The gradient's per-channel values, in the workspace.
struct GradChannels {
  double* mean;
  double* inv_std;
  double* a;  // scale * inv_std
  double* y_grad_mean;
  double* y_grad_xhat_mean;
};

template <typename T>
__global__ void GradChannelsKernel(BatchNormGradTensors<T> t, int64_t channels,
                                   bool is_test, double epsilon,
                                   GradChannels g) {
  SF_CUDA_GRID_LOOP(c, channels) {
    const double inv_std = is_test ? 1.0 / sqrt(t.variance[c] + epsilon)
                                   : static_cast<double>(t.variance[c]);
    g.mean[c] = t.mean[c];
    g.inv_std[c] = inv_std;
    g.a[c] = static_cast<double>(t.scale[c]) * inv_std;
  }
}

// Sums of Y@GRAD and of Y@GRAD * xhat.
template <typename T, typename I>
struct GradTerms {
  struct Channel {
    double mean, inv_std;
  };
  const T* x;
  const T* y_grad;
  GradChannels g;

  __device__ Channel At(I c) const { return {g.mean[c], g.inv_std[c]}; }
  __device__ void Add(const Channel& channel, I e, double* acc) const {
    const double dy = y_grad[e];
    acc[0] += dy;
    acc[1] += dy * (x[e] - channel.mean) * channel.inv_std;
  }
};

template <typename T>
struct GradEpilogue {
  T* scale_grad;
  T* bias_grad;
  GradChannels g;
  double count;

  __device__ void operator()(int64_t c, const double (&sum)[2]) const {
    if (scale_grad != nullptr) scale_grad[c] = static_cast<T>(sum[1]);
    if (bias_grad != nullptr) bias_grad[c] = static_cast<T>(sum[0]);
    g.y_grad_mean[c] = sum[0] / count;
    g.y_grad_xhat_mean[c] = sum[1] / count;
  }
};

// Inference: X@GRAD = a * dy. Training, where the batch statistics depend
// on X: a * (dy - mean(dy) - xhat * mean(dy * xhat)).
template <typename T, typename I>
__global__ void GradXKernel(const T* x, const T* y_grad, GradChannels g,
                            bool is_test, Shape<I> s, I n, T* x_grad) {
  for (I e = GlobalThread<I>(); e < n; e += GridThreads<I>()) {
    const I c = e / s.inner % s.channels;
    const double dy = y_grad[e];
    if (is_test) {
      x_grad[e] = static_cast<T>(g.a[c] * dy);
    } else {
      const double xhat = (x[e] - g.mean[c]) * g.inv_std[c];
      x_grad[e] = static_cast<T>(
          g.a[c] * (dy - g.y_grad_mean[c] - xhat * g.y_grad_xhat_mean[c]));
    }
  }
}

// The workspace's parts.
struct Workspace {
  double* partials;
  double* channel;  // kChannelSlots * channels doubles
};

Workspace Split(const BatchNormShape& shape, void* workspace) {
  double* base = static_cast<double*>(workspace);
  return {base, base + PartitionOf(shape).partials * kMaxSums};
}

template <typename T, typename I>
void Training(const BatchNormShape& shape, double epsilon, double momentum,
              const BatchNormTensors<T>& t, void* workspace,
              cudaStream_t stream) {
  const Workspace w = Split(shape, workspace);
  T* a = reinterpret_cast<T*>(w.channel);
  T* b = reinterpret_cast<T*>(w.channel + shape.channels);
  const double count = static_cast<double>(shape.batch * shape.inner);
  SumPerChannel<I, 3>(shape,
                      StatisticsTerms<T, I>{t.x, static_cast<I>(shape.inner)},
                      TrainingEpilogue<T>{t, count, epsilon, momentum, a, b},
                      w.partials, stream);
  Normalize<T, I>(shape, t.x, a, b, t.y, stream);
}

template <typename T, typename I>
void Grad(const BatchNormShape& shape, bool is_test, double epsilon,
          const BatchNormGradTensors<T>& t, void* workspace,
          cudaStream_t stream) {
  const Workspace w = Split(shape, workspace);
  const int64_t c = shape.channels;
  const GradChannels g{w.channel, w.channel + c, w.channel + 2 * c,
                       w.channel + 3 * c, w.channel + 4 * c};
  GradChannelsKernel<T>
      <<<CudaBlocks(c), kCudaThreads, 0, stream>>>(t, c, is_test, epsilon, g);
  const bool x_grad_needs_sums = t.x_grad != nullptr && !is_test;
  if (t.scale_grad != nullptr || t.bias_grad != nullptr || x_grad_needs_sums) {
    SumPerChannel<I, 2>(
        shape, GradTerms<T, I>{t.x, t.y_grad, g},
        GradEpilogue<T>{t.scale_grad, t.bias_grad, g,
                        static_cast<double>(shape.batch * shape.inner)},
        w.partials, stream);
  }
  const int64_t n = shape.batch * shape.channels * shape.inner;
  if (t.x_grad == nullptr || n == 0) return;
  GradXKernel<T, I><<<CudaBlocks(n), kCudaThreads, 0, stream>>>(
      t.x, t.y_grad, g, is_test, ShapeIn<I>(shape), static_cast<I>(n),
      t.x_grad);
}

}  // namespace

size_t BatchNormWorkspaceBytes(const BatchNormShape& shape) {
  return static_cast<size_t>(PartitionOf(shape).partials * kMaxSums +
                             kChannelSlots * shape.channels) *
         sizeof(double);
}

template <typename T>
void LaunchBatchNormInference(const BatchNormShape& shape, double epsilon,
                              const BatchNormTensors<T>& t, void* workspace,
                              cudaStream_t stream) {
  if (shape.channels == 0) return;
  const Workspace w = Split(shape, workspace);
  T* a = reinterpret_cast<T*>(w.channel);
  T* b = reinterpret_cast<T*>(w.channel + shape.channels);
  InferenceChannelsKernel<T>
      <<<CudaBlocks(shape.channels), kCudaThreads, 0, stream>>>(
          t, shape.channels, epsilon, a, b);
  if (FitsInt32(shape)) {
    Normalize<T, int32_t>(shape, t.x, a, b, t.y, stream);
  } else {
    Normalize<T, int64_t>(shape, t.x, a, b, t.y, stream);
  }
}

template <typename T>
void LaunchBatchNormTraining(const BatchNormShape& shape, double epsilon,
                             double momentum, const BatchNormTensors<T>& t,
                             void* workspace, cudaStream_t stream) {
  if (shape.channels == 0) return;
  if (FitsInt32(shape)) {
    Training<T, int32_t>(shape, epsilon, momentum, t, workspace, stream);
  } else {
    Training<T, int64_t>(shape, epsilon, momentum, t, workspace, stream);
  }
}

template <typename T>
void LaunchBatchNormGrad(const BatchNormShape& shape, bool is_test,
                         double epsilon, const BatchNormGradTensors<T>& t,
                         void* workspace, cudaStream_t stream) {
  if (shape.channels == 0) return;
  if (FitsInt32(shape)) {
    Grad<T, int32_t>(shape, is_test, epsilon, t, workspace, stream);
  } else {
    Grad<T, int64_t>(shape, is_test, epsilon, t, workspace, stream);
  }
}

#define SF_INSTANTIATE_BATCH_NORM(T)                                           \
  template void LaunchBatchNormInference<T>(const BatchNormShape&, double,     \
                                            const BatchNormTensors<T>&, void*, \
                                            cudaStream_t);                     \
  template void LaunchBatchNormTraining<T>(const BatchNormShape&, double,      \
                                           double, const BatchNormTensors<T>&, \
                                           void*, cudaStream_t);               \
  template void LaunchBatchNormGrad<T>(const BatchNormShape&, bool, double,    \
                                       const BatchNormGradTensors<T>&, void*,  \
                                       cudaStream_t);

SF_INSTANTIATE_BATCH_NORM(float)
SF_INSTANTIATE_BATCH_NORM(double)

#undef SF_INSTANTIATE_BATCH_NORM

}  // namespace cuda
}  // namespace scopeflow
