#include "operators/quantization/integer_matmul.h"

#include <algorithm>

#include "operators/common.h"
#include "operators/quantization/onednn_integer_matmul.h"
#include "operators/quantization/quant_params.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::StatusOr<Dims> IntegerMatmulDims(const Dims& a, const Dims& b,
                                       const std::string& describe_a,
                                       const std::string& describe_b) {
  SF_CHECK(!a.empty() && !b.empty(),
           "matmul of %s and %s: expected inputs of rank 1 or more", describe_a,
           describe_b);
  const Dims a2 = a.size() == 1 ? Dims{1, a[0]} : a;
  const Dims b2 = b.size() == 1 ? Dims{b[0], 1} : b;
  const int64_t ka = a2.back();
  const int64_t kb = b2[b2.size() - 2];
  SF_CHECK(ka < 0 || kb < 0 || ka == kb,
           "%s and %s: the inner dimensions %d and %d differ", describe_a,
           describe_b, ka, kb);
  SF_ASSIGN_OR_RETURN(
      Dims out, BroadcastDims(absl::MakeSpan(a2).subspan(0, a2.size() - 2),
                              absl::MakeSpan(b2).subspan(0, b2.size() - 2)));
  if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
  if (b.size() > 1) out.push_back(b2.back());
  return out;
}

namespace {

// For each batch of `out_batch` (row-major), the index of the matrix of an
// input of batch dims `in_batch` it reads (right-aligned, broadcast).
std::vector<int64_t> BatchIndices(const Dims& out_batch, const Dims& in_batch) {
  int64_t count = 1;
  for (int64_t d : out_batch) count *= d;
  std::vector<int64_t> indices(count, 0);
  const size_t offset = out_batch.size() - in_batch.size();
  const Dims in_strides = StridesOf(in_batch);
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat;
    int64_t index = 0;
    for (size_t axis = out_batch.size(); axis-- > 0;) {
      const int64_t coord = rest % out_batch[axis];
      rest /= out_batch[axis];
      if (axis >= offset && in_batch[axis - offset] != 1) {
        index += coord * in_strides[axis - offset];
      }
    }
    indices[flat] = index;
  }
  return indices;
}

template <typename A, typename B>
void Multiply(const A* a, const B* b, const std::vector<int32_t>& a_zero,
              const std::vector<int32_t>& b_zero,
              const IntegerMatmulSizes& sizes, int32_t* acc) {
  const int64_t m = sizes.m, k = sizes.k, n = sizes.n;
  ParallelFor(sizes.batches * m, std::max<int64_t>(1, 4096 / (k * n + 1)),
              [&](int64_t begin, int64_t end) {
                std::vector<int32_t> b_row(n);
                for (int64_t row = begin; row < end; ++row) {
                  const int64_t batch = row / m;
                  const int64_t i = row % m;
                  const A* a_row = a + (sizes.a_batch[batch] * m + i) * k;
                  const B* b_mat = b + sizes.b_batch[batch] * k * n;
                  int32_t* out = acc + row * n;
                  std::fill(out, out + n, 0);
                  for (int64_t p = 0; p < k; ++p) {
                    const int32_t av =
                        static_cast<int32_t>(a_row[p]) - a_zero[i];
                    if (av == 0) continue;
                    const B* b_p = b_mat + p * n;
                    for (int64_t j = 0; j < n; ++j) {
                      out[j] += av * (static_cast<int32_t>(b_p[j]) - b_zero[j]);
                    }
                  }
                }
              });
}

template <typename A>
void MultiplyA(const A* a, const Tensor& b, const std::vector<int32_t>& a_zero,
               const std::vector<int32_t>& b_zero,
               const IntegerMatmulSizes& sizes, int32_t* acc) {
  if (b.dtype() == kInt8) {
    Multiply(a, b.data<int8_t>(), a_zero, b_zero, sizes, acc);
  } else {
    Multiply(a, b.data<uint8_t>(), a_zero, b_zero, sizes, acc);
  }
}

}  // namespace

IntegerMatmulSizes IntegerMatmulSizesOf(const Dims& a, const Dims& b,
                                        const Dims& out) {
  const Dims a2 = a.size() == 1 ? Dims{1, a[0]} : a;
  const Dims b2 = b.size() == 1 ? Dims{b[0], 1} : b;
  IntegerMatmulSizes sizes;
  sizes.m = a2[a2.size() - 2];
  sizes.k = a2.back();
  sizes.n = b2.back();
  const Dims a_batch(a2.begin(), a2.end() - 2);
  const Dims b_batch(b2.begin(), b2.end() - 2);
  const size_t batch_rank = std::max(a_batch.size(), b_batch.size());
  const Dims out_batch(out.begin(), out.begin() + batch_rank);
  sizes.a_batch = BatchIndices(out_batch, a_batch);
  sizes.b_batch = BatchIndices(out_batch, b_batch);
  sizes.batches = static_cast<int64_t>(sizes.a_batch.size());
  return sizes;
}

void IntegerMatmul(const Tensor& a, const Tensor& b,
                   const std::vector<int32_t>& a_zero,
                   const std::vector<int32_t>& b_zero,
                   const IntegerMatmulSizes& sizes, int32_t* acc) {
  const bool one_a_zero = std::all_of(
      a_zero.begin(), a_zero.end(), [&](int32_t z) { return z == a_zero[0]; });
  const bool one_b_zero = std::all_of(
      b_zero.begin(), b_zero.end(), [&](int32_t z) { return z == b_zero[0]; });
  if (one_a_zero && one_b_zero && !a_zero.empty() && !b_zero.empty() &&
      OneDnnIntegerMatmul(a, b, a_zero[0], b_zero[0], sizes, acc).ok()) {
    return;
  }
  IntegerMatmulLoop(a, b, a_zero, b_zero, sizes, acc);
}

void IntegerMatmulLoop(const Tensor& a, const Tensor& b,
                       const std::vector<int32_t>& a_zero,
                       const std::vector<int32_t>& b_zero,
                       const IntegerMatmulSizes& sizes, int32_t* acc) {
  if (a.dtype() == kInt8) {
    MultiplyA(a.data<int8_t>(), b, a_zero, b_zero, sizes, acc);
  } else {
    MultiplyA(a.data<uint8_t>(), b, a_zero, b_zero, sizes, acc);
  }
}

}  // namespace scopeflow
