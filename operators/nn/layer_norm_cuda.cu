#include <algorithm>
#include <cstdint>
#include <limits>

#include "operators/nn/layer_norm_cuda.h"
#include "platform/cuda_launch.h"

namespace scopeflow {
namespace cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
// Rows of up to this many elements go to a warp each, longer ones to a
// block of kRowBlock threads.
constexpr int64_t kWarpRow = 1024;
constexpr int kRowBlock = 512;
// The column sums of the gradient (Scale@GRAD, Bias@GRAD): blocks of 32
// columns by kColumnRows rows, about kTargetBlocks of them.
constexpr int kColumnRows = 8;
constexpr int64_t kTargetBlocks = 1024;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The splits of the rows that the column sums take apart.
int64_t ColumnSplits(int64_t rows, int64_t normalized) {
  const int64_t by_target = CeilDiv(kTargetBlocks, CeilDiv(normalized, 32));
  const int64_t by_rows = std::min<int64_t>(65535, CeilDiv(rows, kColumnRows));
  return std::max<int64_t>(1, std::min(by_target, by_rows));
}

// Sums v over the kGroup threads of a group (a warp, or the whole block);
// every thread of the group gets the sums. `shared` holds N doubles per
// warp of the block.
template <int kGroup, int N>
__device__ void GroupSum(double (&v)[N], double* shared) {
  for (int offset = 16; offset > 0; offset /= 2) {
    for (int k = 0; k < N; ++k)
      v[k] += __shfl_xor_sync(kFullMask, v[k], offset);
  }
  if constexpr (kGroup > 32) {
    const int warp = threadIdx.x / 32;
    __syncthreads();  // the previous sums are read
    if (threadIdx.x % 32 == 0) {
      for (int k = 0; k < N; ++k) shared[warp * N + k] = v[k];
    }
    __syncthreads();
    for (int k = 0; k < N; ++k) {
      double total = 0;
      for (int w = 0; w < kGroup / 32; ++w) total += shared[w * N + k];
      v[k] = total;
    }
  }
}

// The rows a group of kGroup threads takes: `first`, first + `step`, ...;
// `lane` is the thread's place in its group.
template <int kGroup>
struct RowLoop {
  int lane;
  int64_t first, step;
};

template <int kGroup>
__device__ RowLoop<kGroup> RowsOfGroup() {
  const int groups = blockDim.x / kGroup;
  return {static_cast<int>(threadIdx.x % kGroup),
          int64_t{blockIdx.x} * groups + threadIdx.x / kGroup,
          int64_t{gridDim.x} * groups};
}

// The row's mean and 1 / sqrt(variance + epsilon), both passes in double
// as the CPU kernel takes them.
template <typename T, int kGroup>
__device__ void RowStatistics(const T* x, int64_t n, int lane, double epsilon,
                              double* shared, double& mean, double& inv_std) {
  double sum[1] = {0};
  for (int64_t i = lane; i < n; i += kGroup) sum[0] += x[i];
  GroupSum<kGroup>(sum, shared);
  mean = sum[0] / n;
  double squares[1] = {0};
  for (int64_t i = lane; i < n; i += kGroup) {
    const double d = x[i] - mean;
    squares[0] += d * d;
  }
  GroupSum<kGroup>(squares, shared);
  inv_std = 1.0 / sqrt(squares[0] / n + epsilon);
}

template <typename T, int kGroup>
__global__ void LayerNormKernel(LayerNormTensors<T> t, int64_t rows, int64_t n,
                                double epsilon) {
  __shared__ double shared[kRowBlock / 32];
  const RowLoop<kGroup> loop = RowsOfGroup<kGroup>();
  for (int64_t r = loop.first; r < rows; r += loop.step) {
    const T* x = t.x + r * n;
    double mean, inv_std;
    RowStatistics<T, kGroup>(x, n, loop.lane, epsilon, shared, mean, inv_std);
    if (loop.lane == 0) {
      if (t.mean != nullptr) t.mean[r] = static_cast<T>(mean);
      if (t.inv_std != nullptr) t.inv_std[r] = static_cast<T>(inv_std);
    }
    T* y = t.y + r * n;
    for (int64_t i = loop.lane; i < n; i += kGroup) {
      // Rounded products: the CPU kernel adds the bias apart.
      double v = __dmul_rn(x[i] - mean, inv_std);
      if (t.scale != nullptr) v = __dmul_rn(v, t.scale[i]);
      if (t.bias != nullptr) v += t.bias[i];
      y[i] = static_cast<T>(v);
    }
  }
}

template <typename T>
__global__ void FillKernel(T* out, int64_t n, T value) {
  SF_CUDA_GRID_LOOP(i, n) { out[i] = value; }
}

// Per row: the statistics again (into row_mean and row_inv_std where not
// null, for the column sums), and X@GRAD where bound, with g = Y@GRAD *
// Scale: inv_std * (g - mean(g) - xhat * mean(g * xhat)), plus the shares
// of Mean@GRAD and InvStdDev@GRAD.
template <typename T, int kGroup>
__global__ void LayerNormGradRowsKernel(LayerNormGradTensors<T> t, int64_t rows,
                                        int64_t n, double epsilon,
                                        double* row_mean, double* row_inv_std) {
  __shared__ double shared[kRowBlock / 32 * 2];
  const RowLoop<kGroup> loop = RowsOfGroup<kGroup>();
  for (int64_t r = loop.first; r < rows; r += loop.step) {
    const T* x = t.x + r * n;
    const T* dy = t.y_grad + r * n;
    double mean, inv_std;
    RowStatistics<T, kGroup>(x, n, loop.lane, epsilon, shared, mean, inv_std);
    if (loop.lane == 0 && row_mean != nullptr) {
      row_mean[r] = mean;
      row_inv_std[r] = inv_std;
    }
    if (t.x_grad == nullptr) continue;
    const auto g_at = [&](int64_t i) -> double {
      return t.scale == nullptr ? static_cast<double>(dy[i])
                                : dy[i] * static_cast<double>(t.scale[i]);
    };
    double sums[2] = {0, 0};
    for (int64_t i = loop.lane; i < n; i += kGroup) {
      const double g = g_at(i);
      sums[0] += g;
      sums[1] += g * ((x[i] - mean) * inv_std);
    }
    GroupSum<kGroup>(sums, shared);
    const double mean_share =
        t.mean_grad == nullptr ? 0.0 : static_cast<double>(t.mean_grad[r]) / n;
    const double xhat_factor =
        t.inv_std_grad == nullptr
            ? 0.0
            : -static_cast<double>(t.inv_std_grad[r]) * inv_std * inv_std / n;
    const double g_mean = sums[0] / n;
    const double gx_mean = sums[1] / n;
    T* dx = t.x_grad + r * n;
    for (int64_t i = loop.lane; i < n; i += kGroup) {
      const double xhat = (x[i] - mean) * inv_std;
      dx[i] = static_cast<T>(inv_std * (g_at(i) - g_mean - xhat * gx_mean) +
                             mean_share + xhat_factor * xhat);
    }
  }
}

// Partial column sums of Y@GRAD * xhat and of Y@GRAD: thread (x, y) of
// block (bx, by) takes column bx * 32 + x over rows by * kColumnRows + y,
// ... .
template <typename T>
__global__ void ColumnSumsKernel(const T* x, const T* dy,
                                 const double* row_mean,
                                 const double* row_inv_std, int64_t rows,
                                 int64_t n, double* partials) {
  __shared__ double shared[kColumnRows][32][2];
  const int64_t i = int64_t{blockIdx.x} * 32 + threadIdx.x;
  double acc[2] = {0, 0};
  if (i < n) {
    for (int64_t r = int64_t{blockIdx.y} * kColumnRows + threadIdx.y; r < rows;
         r += int64_t{gridDim.y} * kColumnRows) {
      const int64_t e = r * n + i;
      const double g = dy[e];
      acc[0] += g * ((x[e] - row_mean[r]) * row_inv_std[r]);
      acc[1] += g;
    }
  }
  shared[threadIdx.y][threadIdx.x][0] = acc[0];
  shared[threadIdx.y][threadIdx.x][1] = acc[1];
  __syncthreads();
  if (threadIdx.y != 0 || i >= n) return;
  for (int k = 0; k < 2; ++k) {
    double total = 0;
    for (int y = 0; y < kColumnRows; ++y) total += shared[y][threadIdx.x][k];
    partials[(int64_t{blockIdx.y} * n + i) * 2 + k] = total;
  }
}

template <typename T>
__global__ void ColumnTotalsKernel(const double* partials, int64_t splits,
                                   int64_t n, T* scale_grad, T* bias_grad) {
  SF_CUDA_GRID_LOOP(i, n) {
    double scale = 0, bias = 0;
    for (int64_t s = 0; s < splits; ++s) {
      scale += partials[(s * n + i) * 2];
      bias += partials[(s * n + i) * 2 + 1];
    }
    if (scale_grad != nullptr) scale_grad[i] = static_cast<T>(scale);
    if (bias_grad != nullptr) bias_grad[i] = static_cast<T>(bias);
  }
}

// Blocks for `rows` rows of `n` elements, and whether a warp takes each.
struct RowLaunch {
  bool by_warp;
  unsigned blocks;
  int threads;
};

RowLaunch RowLaunchOf(int64_t rows, int64_t n) {
  if (n <= kWarpRow) return {true, CudaBlocks(rows * 32), kCudaThreads};
  return {false, static_cast<unsigned>(std::min<int64_t>(rows, 65535)),
          kRowBlock};
}

}  // namespace

template <typename T>
void LaunchLayerNorm(int64_t rows, int64_t normalized, double epsilon,
                     const LayerNormTensors<T>& t, cudaStream_t stream) {
  if (rows == 0) return;
  if (normalized == 0) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    T* const outputs[] = {t.mean, t.inv_std};
    for (T* out : outputs) {
      if (out == nullptr) continue;
      FillKernel<T>
          <<<CudaBlocks(rows), kCudaThreads, 0, stream>>>(out, rows, nan);
    }
    return;
  }
  const RowLaunch launch = RowLaunchOf(rows, normalized);
  if (launch.by_warp) {
    LayerNormKernel<T, 32><<<launch.blocks, launch.threads, 0, stream>>>(
        t, rows, normalized, epsilon);
  } else {
    LayerNormKernel<T, kRowBlock><<<launch.blocks, launch.threads, 0, stream>>>(
        t, rows, normalized, epsilon);
  }
}

size_t LayerNormGradWorkspaceBytes(int64_t rows, int64_t normalized) {
  if (normalized == 0) return 0;
  return static_cast<size_t>(2 * rows +
                             2 * ColumnSplits(rows, normalized) * normalized) *
         sizeof(double);
}

template <typename T>
void LaunchLayerNormGrad(int64_t rows, int64_t normalized, double epsilon,
                         const LayerNormGradTensors<T>& t, void* workspace,
                         cudaStream_t stream) {
  if (normalized == 0) return;
  const bool column_sums = t.scale_grad != nullptr || t.bias_grad != nullptr;
  double* row_mean = static_cast<double*>(workspace);
  double* row_inv_std = row_mean + rows;
  double* partials = row_inv_std + rows;
  if (rows > 0 && (column_sums || t.x_grad != nullptr)) {
    double* mean_out = column_sums ? row_mean : nullptr;
    double* inv_std_out = column_sums ? row_inv_std : nullptr;
    const RowLaunch launch = RowLaunchOf(rows, normalized);
    if (launch.by_warp) {
      LayerNormGradRowsKernel<T, 32>
          <<<launch.blocks, launch.threads, 0, stream>>>(
              t, rows, normalized, epsilon, mean_out, inv_std_out);
    } else {
      LayerNormGradRowsKernel<T, kRowBlock>
          <<<launch.blocks, launch.threads, 0, stream>>>(
              t, rows, normalized, epsilon, mean_out, inv_std_out);
    }
  }
  if (!column_sums) return;
  const int64_t splits = ColumnSplits(rows, normalized);
  const dim3 grid(static_cast<unsigned>(CeilDiv(normalized, 32)),
                  static_cast<unsigned>(splits));
  ColumnSumsKernel<T><<<grid, dim3(32, kColumnRows), 0, stream>>>(
      t.x, t.y_grad, row_mean, row_inv_std, rows, normalized, partials);
  ColumnTotalsKernel<T><<<CudaBlocks(normalized), kCudaThreads, 0, stream>>>(
      partials, splits, normalized, t.scale_grad, t.bias_grad);
}

template void LaunchLayerNorm<float>(int64_t, int64_t, double,
                                     const LayerNormTensors<float>&,
                                     cudaStream_t);
template void LaunchLayerNorm<double>(int64_t, int64_t, double,
                                      const LayerNormTensors<double>&,
                                      cudaStream_t);
template void LaunchLayerNormGrad<float>(int64_t, int64_t, double,
                                         const LayerNormGradTensors<float>&,
                                         void*, cudaStream_t);
template void LaunchLayerNormGrad<double>(int64_t, int64_t, double,
                                          const LayerNormGradTensors<double>&,
                                          void*, cudaStream_t);

}  // namespace cuda
}  // namespace scopeflow
