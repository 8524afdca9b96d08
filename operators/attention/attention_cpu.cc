#include "operators/attention/attention_cpu.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "operators/activation/softmax_math.h"
#include "operators/elementwise/vector_math.h"
#include "operators/gemm.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"
#include "platform/vector_clones.h"

namespace scopeflow {
namespace {

// Multiply-adds below which a share of the work is not worth waking a
// thread for.
constexpr int64_t kMultiplyAddsWorthAThread = int64_t{1} << 18;

// Keeps the first error of the threads of a ParallelFor.
class FirstError {
 public:
  void Record(absl::Status status) {
    if (status.ok()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_.ok()) status_ = std::move(status);
  }
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }

 private:
  std::mutex mutex_;
  absl::Status status_;
};

// A buffer of at least `size` elements that the calling thread keeps for
// its next call; `which` tells apart the buffers used at once.
template <typename T>
T* ThreadBuffer(int which, int64_t size) {
  thread_local std::vector<T> buffers[3];
  std::vector<T>& buffer = buffers[which];
  if (buffer.size() < static_cast<size_t>(size)) buffer.resize(size);
  return buffer.data();
}

// Gemm, also for empty products: with k = 0, C = beta * C.
template <typename T>
absl::Status Product(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
                     const T* a, int64_t lda, const T* b, int64_t ldb, T beta,
                     T* c, int64_t ldc) {
  if (m == 0 || n == 0) return absl::OkStatus();
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      T* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j)
        row[j] = beta == T(0) ? T(0) : beta * row[j];
    }
    return absl::OkStatus();
  }
  return Gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Softmax of `rows` rows of n >= 1 floats, n apart, in place, on the
// widest vectors the CPU has: the exps of the scores are a large share of
// attention's work. The reductions keep kLanes partial results, so that
// they vectorize (a single accumulator fixes the order of the adds).
constexpr int kLanes = 16;
SF_WIDEST_VECTORS void SoftmaxRowsWidest(float* p, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    float* x = p + r * n;
    const int64_t full = n - n % kLanes;
    float partial[kLanes];
    for (int j = 0; j < kLanes; ++j) partial[j] = x[0];
    for (int64_t i = 0; i < full; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        partial[j] = x[i + j] > partial[j] ? x[i + j] : partial[j];
      }
    }
    float max = x[0];
    for (int j = 0; j < kLanes; ++j) max = partial[j] > max ? partial[j] : max;
    for (int64_t i = full; i < n; ++i) max = x[i] > max ? x[i] : max;
    for (int j = 0; j < kLanes; ++j) partial[j] = 0.0f;
    for (int64_t i = 0; i < full; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        const float e = vmath::Exp(x[i + j] - max);
        x[i + j] = e;
        partial[j] += e;
      }
    }
    float sum = 0.0f;
    for (int j = 0; j < kLanes; ++j) sum += partial[j];
    for (int64_t i = full; i < n; ++i) {
      x[i] = vmath::Exp(x[i] - max);
      sum += x[i];
    }
    const float inverse = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) x[i] *= inverse;
  }
}

void SoftmaxRows(float* p, int64_t rows, int64_t n) {
  SoftmaxRowsWidest(p, rows, n);
}
void SoftmaxRows(double* p, int64_t rows, int64_t n) {
  softmax_math::SoftmaxRows(p, p, rows, n);
}

// The probabilities of query rows [r0, r0 + rows) of batch b: the mask
// (or zeros), plus scale * Q K^T, softmax along each row; into p, rows Lk
// apart.
template <typename T>
absl::Status Probabilities(const AttentionShape& s, T scale, const T* q,
                           const T* k, const T* mask, int64_t b, int64_t r0,
                           int64_t rows, T* p) {
  T beta = 0;
  if (mask != nullptr) {
    const T* m = mask + s.mask_offset[b];
    for (int64_t i = 0; i < rows; ++i) {
      const T* mask_row = m + (r0 + i) * s.mask_row_stride;
      T* p_row = p + i * s.lk;
      if (s.mask_col_stride == 1) {
        std::copy(mask_row, mask_row + s.lk, p_row);
      } else {
        std::fill(p_row, p_row + s.lk, mask_row[0]);
      }
    }
    beta = 1;
  }
  SF_RETURN_IF_ERROR(Product<T>(false, !s.transpose_k, rows, s.lk, s.d, scale,
                                q + b * s.q.batch_stride + r0 * s.q.row_stride,
                                s.q.row_stride, k + b * s.k.batch_stride,
                                s.k.row_stride, beta, p, s.lk));
  SoftmaxRows(p, rows, s.lk);
  return absl::OkStatus();
}

constexpr int64_t kScoreBlockElements = int64_t{1} << 16;
constexpr int64_t kFewestRowsPerBlock = 16;

int64_t BlocksPerBatch(const AttentionShape& s, int64_t rows) {
  return (s.lq + rows - 1) / rows;
}

void Zero(float* data, int64_t n) { std::fill(data, data + n, 0.0f); }
void Zero(double* data, int64_t n) { std::fill(data, data + n, 0.0); }

}  // namespace

int64_t RowsPerBlock(const AttentionShape& s) {
  if (s.rows_per_block > 0) return s.rows_per_block;
  const int64_t most = std::max(kFewestRowsPerBlock,
                                kScoreBlockElements / std::max<int64_t>(s.lk, 1));
  const int64_t blocks = (s.lq + most - 1) / most;
  return std::max<int64_t>(1, (s.lq + blocks - 1) / std::max<int64_t>(blocks, 1));
}

template <typename T>
absl::Status AttentionForward(const AttentionShape& s, T scale, const T* q,
                              const T* k, const T* v, const T* mask, T* out) {
  if (s.batch == 0 || s.lq == 0 || s.dv == 0) return absl::OkStatus();
  if (s.lk == 0) {
    // No keys: every row averages nothing.
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t i = 0; i < s.lq; ++i) {
        Zero(out + b * s.out.batch_stride + i * s.out.row_stride, s.dv);
      }
    }
    return absl::OkStatus();
  }
  const int64_t block_rows = RowsPerBlock(s);
  const int64_t blocks = BlocksPerBatch(s, block_rows);
  const int64_t per_block = block_rows * s.lk * (s.d + s.dv + 1);
  FirstError error;
  ParallelFor(s.batch * blocks,
              std::max<int64_t>(1, kMultiplyAddsWorthAThread / per_block),
              [&](int64_t begin, int64_t end) {
                T* p = ThreadBuffer<T>(0, block_rows * s.lk);
                for (int64_t item = begin; item < end; ++item) {
                  const int64_t b = item / blocks;
                  const int64_t r0 = (item % blocks) * block_rows;
                  const int64_t rows = std::min(block_rows, s.lq - r0);
                  absl::Status status =
                      Probabilities(s, scale, q, k, mask, b, r0, rows, p);
                  if (status.ok()) {
                    status = Product<T>(
                        false, false, rows, s.dv, s.lk, T(1), p, s.lk,
                        v + b * s.v.batch_stride, s.v.row_stride, T(0),
                        out + b * s.out.batch_stride + r0 * s.out.row_stride,
                        s.out.row_stride);
                  }
                  if (!status.ok()) return error.Record(std::move(status));
                }
              });
  return error.status();
}

template <typename T>
absl::Status AttentionBackward(const AttentionShape& s, T scale, const T* q,
                               const T* k, const T* v, const T* mask,
                               const T* out, const T* out_grad, T* q_grad,
                               T* k_grad, T* v_grad, T* mask_grad,
                               T* scale_grad) {
  // The gradients start at zero: those of inputs no score depends on (no
  // query rows or keys) stay there, and the mask's is a sum.
  if (mask_grad != nullptr) Zero(mask_grad, s.mask_numel);
  if (scale_grad != nullptr) *scale_grad = 0;
  if (s.batch == 0 || s.lq == 0 || s.lk == 0) {
    if (q_grad != nullptr) Zero(q_grad, s.batch * s.lq * s.d);
    if (k_grad != nullptr) Zero(k_grad, s.batch * s.lk * s.d);
    if (v_grad != nullptr) Zero(v_grad, s.batch * s.lk * s.dv);
    return absl::OkStatus();
  }
  const bool scores_grad = q_grad != nullptr || k_grad != nullptr ||
                           mask_grad != nullptr || scale_grad != nullptr;
  const int64_t block_rows = RowsPerBlock(s);
  const int64_t blocks = BlocksPerBatch(s, block_rows);
  const int64_t per_batch = s.lq * s.lk * (2 * s.d + 3 * s.dv + 1);
  FirstError error;
  std::mutex sum_mutex;
  // Threads take whole batch indices: each writes the K and V gradients of
  // its own, summing over the query blocks.
  ParallelFor(
      s.batch, std::max<int64_t>(1, kMultiplyAddsWorthAThread / per_batch),
      [&](int64_t begin, int64_t end) {
        T* p = ThreadBuffer<T>(0, block_rows * s.lk);
        T* ds = ThreadBuffer<T>(1, block_rows * s.lk);
        // The mask may be shared by batch indices of other threads: its
        // gradient, and the scale's, are summed here first.
        std::vector<T> local_mask_grad(mask_grad != nullptr ? s.mask_numel : 0);
        T local_scale_grad = 0;
        auto run = [&](int64_t b, int64_t block) -> absl::Status {
          const int64_t r0 = block * block_rows;
          const int64_t rows = std::min(block_rows, s.lq - r0);
          const T beta = block == 0 ? T(0) : T(1);
          const T* q_b = q + b * s.q.batch_stride + r0 * s.q.row_stride;
          const T* k_b = k + b * s.k.batch_stride;
          const T* v_b = v + b * s.v.batch_stride;
          const int64_t out_at = b * s.out.batch_stride + r0 * s.out.row_stride;
          const T* o = out + out_at;
          const T* g = out_grad + out_at;
          SF_RETURN_IF_ERROR(
              Probabilities(s, scale, q, k, mask, b, r0, rows, p));
          if (v_grad != nullptr) {
            // dV += P^T dOut.
            SF_RETURN_IF_ERROR(Product<T>(true, false, s.lk, s.dv, rows, T(1),
                                          p, s.lk, g, s.out.row_stride, beta,
                                          v_grad + b * s.v.batch_stride,
                                          s.v.row_stride));
          }
          if (!scores_grad) return absl::OkStatus();
          // dP = dOut V^T; dS = P * (dP - rowsum(dOut * Out)).
          SF_RETURN_IF_ERROR(Product<T>(false, true, rows, s.lk, s.dv, T(1), g,
                                        s.out.row_stride, v_b, s.v.row_stride,
                                        T(0), ds, s.lk));
          for (int64_t i = 0; i < rows; ++i) {
            const T* o_row = o + i * s.out.row_stride;
            const T* g_row = g + i * s.out.row_stride;
            T delta = 0;
            for (int64_t j = 0; j < s.dv; ++j) delta += o_row[j] * g_row[j];
            T* ds_row = ds + i * s.lk;
            const T* p_row = p + i * s.lk;
            for (int64_t j = 0; j < s.lk; ++j) {
              ds_row[j] = p_row[j] * (ds_row[j] - delta);
            }
          }
          if (mask_grad != nullptr) {
            T* m = local_mask_grad.data() + s.mask_offset[b];
            for (int64_t i = 0; i < rows; ++i) {
              T* m_row = m + (r0 + i) * s.mask_row_stride;
              const T* ds_row = ds + i * s.lk;
              for (int64_t j = 0; j < s.lk; ++j) {
                m_row[j * s.mask_col_stride] += ds_row[j];
              }
            }
          }
          if (q_grad != nullptr || scale_grad != nullptr) {
            // dQ = scale dS K. The scale's gradient is the sum of dS times the
            // unscaled scores Q K^T, which is the sum of Q times dS K.
            T* dq = q_grad == nullptr
                        ? ThreadBuffer<T>(2, block_rows * s.d)
                        : q_grad + b * s.q.batch_stride + r0 * s.q.row_stride;
            const int64_t ldq = q_grad == nullptr ? s.d : s.q.row_stride;
            SF_RETURN_IF_ERROR(Product<T>(false, s.transpose_k, rows, s.d, s.lk,
                                          T(1), ds, s.lk, k_b, s.k.row_stride,
                                          T(0), dq, ldq));
            for (int64_t i = 0; i < rows; ++i) {
              T* dq_row = dq + i * ldq;
              if (scale_grad != nullptr) {
                const T* q_row = q_b + i * s.q.row_stride;
                for (int64_t j = 0; j < s.d; ++j) {
                  local_scale_grad += q_row[j] * dq_row[j];
                }
              }
              if (q_grad != nullptr) {
                for (int64_t j = 0; j < s.d; ++j) dq_row[j] *= scale;
              }
            }
          }
          if (k_grad != nullptr) {
            T* k_grad_b = k_grad + b * s.k.batch_stride;
            if (s.transpose_k) {
              // dK^T += scale Q^T dS.
              SF_RETURN_IF_ERROR(Product<T>(true, false, s.d, s.lk, rows, scale,
                                            q_b, s.q.row_stride, ds, s.lk, beta,
                                            k_grad_b, s.k.row_stride));
            } else {
              // dK += scale dS^T Q.
              SF_RETURN_IF_ERROR(Product<T>(true, false, s.lk, s.d, rows, scale,
                                            ds, s.lk, q_b, s.q.row_stride, beta,
                                            k_grad_b, s.k.row_stride));
            }
          }
          return absl::OkStatus();
        };
        for (int64_t b = begin; b < end; ++b) {
          for (int64_t block = 0; block < blocks; ++block) {
            absl::Status status = run(b, block);
            if (!status.ok()) return error.Record(std::move(status));
          }
        }
        std::lock_guard<std::mutex> lock(sum_mutex);
        if (scale_grad != nullptr) *scale_grad += local_scale_grad;
        if (mask_grad != nullptr) {
          for (int64_t i = 0; i < s.mask_numel; ++i) {
            mask_grad[i] += local_mask_grad[i];
          }
        }
      });
  return error.status();
}

template absl::Status AttentionForward<float>(const AttentionShape&, float,
                                              const float*, const float*,
                                              const float*, const float*,
                                              float*);
template absl::Status AttentionForward<double>(const AttentionShape&, double,
                                               const double*, const double*,
                                               const double*, const double*,
                                               double*);
template absl::Status AttentionBackward<float>(const AttentionShape&, float,
                                               const float*, const float*,
                                               const float*, const float*,
                                               const float*, const float*,
                                               float*, float*, float*, float*,
                                               float*);
template absl::Status AttentionBackward<double>(const AttentionShape&, double,
                                                const double*, const double*,
                                                const double*, const double*,
                                                const double*, const double*,
                                                double*, double*, double*,
                                                double*, double*);

}  // namespace scopeflow
