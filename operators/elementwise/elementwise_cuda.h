// Launchers of the elementwise kernels (binary_cuda.cu, broadcast_grad_cuda.cu,
// unary_cuda.cu) on a CUDA stream. Plain C++ and CUDA runtime types only, so
// both nvcc and the C++ compiler read it. Pointers are device pointers.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_ELEMENTWISE_CUDA_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_ELEMENTWISE_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scopeflow {
namespace cuda {

inline constexpr int kMaxBroadcastRank = 8;
inline constexpr int kMaxBroadcastOperands = 3;

// An iteration over an output of `rank` dimensions `dims` (row-major) and
// where the operands' elements lie in it: stepping along dimension d moves
// operand k by strides[k][d] elements, 0 where it is broadcast. The
// elementwise::BroadcastPlan of the operands, its rank bounded so that it
// travels to the kernels by value. A rank-1 shape with strides 0 or 1 has
// every operand as large as the output or a single element: the kernels
// then need no index arithmetic.
struct BroadcastShape {
  int rank = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[kMaxBroadcastOperands][kMaxBroadcastRank] = {};
};

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };

// out = op(x, y) over the n elements of the broadcast `shape` (operands x
// and y). Integer kDiv and kPow report inputs they reject in `*error`
// (device memory the caller set to ~0; null for other ops and dtypes): the
// lowest index of a zero divisor in y, or some index of y where 0 meets a
// negative exponent. Integer arithmetic wraps around.
template <typename T>
void LaunchBinary(BinaryOp op, const T* x, const T* y, T* out, int64_t n,
                  const BroadcastShape& shape, unsigned long long* error,
                  cudaStream_t stream);

// Writes *error to *report unless it is still ~0 (nothing rejected): a
// slot of mapped host memory the host reads after the stream's work, so
// reporting needs no wait.
void LaunchReportRejected(const unsigned long long* error, int64_t* report,
                          cudaStream_t stream);

enum class CompareOp { kEqual, kLess, kGreater, kLessEqual, kGreaterEqual };

template <typename T>
void LaunchCompare(CompareOp op, const T* x, const T* y, bool* out, int64_t n,
                   const BroadcastShape& shape, cudaStream_t stream);

// out = condition ? x : y over the broadcast `shape` (operands condition,
// x, y).
template <typename T>
void LaunchWhere(const bool* condition, const T* x, const T* y, T* out,
                 int64_t n, const BroadcastShape& shape, cudaStream_t stream);

// The gradient ops of the broadcast ops: kWhere is where_grad (reads
// condition and dout), the others <op>_grad (read x, y and dout).
enum class GradOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kWhere };

template <typename T>
struct GradInputs {
  GradOp op = GradOp::kAdd;
  const T* x = nullptr;
  const T* y = nullptr;
  const bool* condition = nullptr;
  const T* dout = nullptr;
};

// Both gradients where no operand is broadcast: dx[i] and dy[i] for i < n.
template <typename T>
void LaunchGradSameShape(const GradInputs<T>& in, T* dx, T* dy, int64_t n,
                         cudaStream_t stream);

// The gradient of one operand A (X, or Y if `for_y`) summed over the
// dimensions along which it is broadcast. `shape` iterates over dout's
// n > 0 elements with operand 0 being A and operand 1 the other operand the
// term reads (Y or X, or Condition for where_grad). `grad` has A's shape.
// `workspace` holds GradWorkspaceBytes(shape, sizeof(T)) bytes.
template <typename T>
void LaunchBroadcastGrad(const GradInputs<T>& in, bool for_y, T* grad,
                         const BroadcastShape& shape, void* workspace,
                         cudaStream_t stream);

// Scratch bytes LaunchBroadcastGrad needs for `shape` (partial sums where it
// splits long reductions over several blocks); 0 if none.
size_t GradWorkspaceBytes(const BroadcastShape& shape, size_t element_size);

enum class UnaryOp { kExp, kLog, kSqrt, kErf, kSin, kCos, kAbs, kNeg };

// out[i] = op(x[i]) for i < n.
template <typename T>
void LaunchUnary(UnaryOp op, const T* x, T* out, int64_t n,
                 cudaStream_t stream);

// out = scale * x + bias (or scale * (x + bias)), each step rounded (no
// fused multiply-add), wrapping around for integers.
template <typename T>
void LaunchScale(const T* x, T* out, int64_t n, T scale, T bias,
                 bool bias_after_scale, cudaStream_t stream);

// out = min(max(x, lo), hi); NaN stays NaN.
template <typename T>
void LaunchClip(const T* x, T* out, int64_t n, T lo, T hi, cudaStream_t stream);

// The gradients of the math functions, from X or Out (as the CPU kernels
// read) and the output's gradient.
enum class UnaryGradOp { kExp, kLog, kSqrt, kErf, kSin, kCos, kAbs };

template <typename T>
void LaunchUnaryGrad(UnaryGradOp op, const T* value, const T* dout, T* dx,
                     int64_t n, cudaStream_t stream);

// dx = dout where lo <= x <= hi (or x is NaN), else 0.
template <typename T>
void LaunchClipGrad(const T* x, const T* dout, T* dx, int64_t n, T lo, T hi,
                    cudaStream_t stream);

// The element types of cast; kFloat16 is IEEE binary16 bits.
enum class CastType {
  kFloat32,
  kFloat64,
  kFloat16,
  kInt32,
  kInt64,
  kUInt8,
  kInt8,
  kBool
};

// out[i] = x[i] converted from `from` to `to` for i < n, as the CPU cast.
void LaunchCast(CastType from, const void* x, CastType to, void* out, int64_t n,
                cudaStream_t stream);

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_ELEMENTWISE_CUDA_H_
