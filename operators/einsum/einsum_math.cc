#include "operators/einsum/einsum_math.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "operators/batched_gemm.h"
#include "operators/common.h"
#include "operators/strided_copy.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace einsum {
namespace {

bool Contains(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

int IndexOf(const std::vector<int>& labels, int label) {
  return static_cast<int>(std::find(labels.begin(), labels.end(), label) -
                          labels.begin());
}

int64_t Product(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// The tensor of `labels` whose element at index i is the element of `src`
// at offset sum_k i_k * strides[k]: permutes, diagonals (strides summed
// over repeated labels) and broadcasts (stride 0) alike.
template <typename T>
Labeled<T> Gather(const Labeled<T>& src, std::vector<int> labels, Dims dims,
                  const Dims& strides) {
  Labeled<T> out;
  out.data.resize(Product(dims));
  if (!out.data.empty()) {
    CopyStrided(out.data.data(), StridesOf(dims), src.data.data(), strides,
                dims, sizeof(T));
  }
  out.dims = std::move(dims);
  out.labels = std::move(labels);
  return out;
}

// Each label once, in order of first appearance: a label written twice
// reads the diagonal.
template <typename T>
Labeled<T> Diagonal(const Labeled<T>& x) {
  const Dims src_strides = StridesOf(x.dims);
  std::vector<int> labels;
  Dims dims, strides;
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    const int k = IndexOf(labels, x.labels[axis]);
    if (k < static_cast<int>(labels.size())) {
      strides[k] += src_strides[axis];
      dims[k] = std::min(dims[k], x.dims[axis]);
      continue;
    }
    labels.push_back(x.labels[axis]);
    dims.push_back(x.dims[axis]);
    strides.push_back(src_strides[axis]);
  }
  if (labels.size() == x.labels.size()) return x;
  return Gather(x, std::move(labels), std::move(dims), strides);
}

// `x` with its axes in the order of `labels` (a permutation of its labels),
// an axis of size 1 broadcast to `sizes[label]` where `broadcast`.
template <typename T>
Labeled<T> Arrange(const Labeled<T>& x, const std::vector<int>& labels,
                   absl::Span<const int64_t> sizes, bool broadcast) {
  const Dims src_strides = StridesOf(x.dims);
  Dims dims, strides;
  bool identity = true;
  for (size_t k = 0; k < labels.size(); ++k) {
    const int axis = IndexOf(x.labels, labels[k]);
    identity = identity && axis == static_cast<int>(k);
    const int64_t size = x.dims[axis];
    if (broadcast && size != sizes[labels[k]]) {
      identity = false;
      dims.push_back(sizes[labels[k]]);
      strides.push_back(0);
    } else {
      dims.push_back(size);
      strides.push_back(src_strides[axis]);
    }
  }
  if (identity) return x;
  return Gather(x, labels, std::move(dims), strides);
}

// `x` summed over every axis whose label `keep` rejects.
template <typename T, typename Keep>
Labeled<T> SumOut(const Labeled<T>& x, Keep keep) {
  std::vector<int> labels;
  Dims dims;
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    if (keep(x.labels[axis])) {
      labels.push_back(x.labels[axis]);
      dims.push_back(x.dims[axis]);
    }
  }
  if (labels.size() == x.labels.size()) return x;
  Labeled<T> out;
  out.data.assign(Product(dims), T(0));
  const Dims out_strides = StridesOf(dims);
  // Destination stride per source axis: 0 for the summed ones.
  Dims to(x.labels.size(), 0);
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    const int k = IndexOf(labels, x.labels[axis]);
    if (k < static_cast<int>(labels.size())) to[axis] = out_strides[k];
  }
  const int64_t n = static_cast<int64_t>(x.data.size());
  const int rank = static_cast<int>(x.dims.size());
  Dims index(rank, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    out.data[offset] += x.data[i];
    for (int k = rank - 1; k >= 0; --k) {
      offset += to[k];
      if (++index[k] < x.dims[k]) break;
      offset -= to[k] * x.dims[k];
      index[k] = 0;
    }
  }
  out.labels = std::move(labels);
  out.dims = std::move(dims);
  return out;
}

// c[b] = a[b] (m x k) times b[b] (k x n), row-major, for every batch b.
template <typename T>
absl::Status MatrixProducts(int64_t batch, int64_t m, int64_t k, int64_t n,
                            const T* a, const T* b, T* c) {
  if (batch * m * n == 0) return absl::OkStatus();
  if (k == 0) {
    std::fill(c, c + batch * m * n, T(0));
    return absl::OkStatus();
  }
  if constexpr (std::is_floating_point_v<T>) {
    BatchedGemmShape shape;
    shape.a = {batch, m, k};
    shape.b = {batch, k, n};
    shape.c = {batch, m, n};
    return BatchedGemm(shape, T(1), a, b, T(0), c);
  } else {
    for (int64_t s = 0; s < batch; ++s) {
      const T* as = a + s * m * k;
      const T* bs = b + s * k * n;
      T* cs = c + s * m * n;
      std::fill(cs, cs + m * n, T(0));
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p) {
          const T v = as[i * k + p];
          for (int64_t j = 0; j < n; ++j) cs[i * n + j] += v * bs[p * n + j];
        }
      }
    }
    return absl::OkStatus();
  }
}

// The einsum of two operands, each label once in each, keeping the labels
// `keep` says and summing the rest: labels in both and kept are batch
// dims, in both and not kept contracted, in one only kept as they are.
template <typename T>
absl::StatusOr<Labeled<T>> Pair(const Labeled<T>& a_in,
                                const Labeled<T>& b_in,
                                const std::vector<int>& keep,
                                absl::Span<const int64_t> sizes) {
  const Labeled<T> a = SumOut(a_in, [&](int l) {
    return Contains(keep, l) || Contains(b_in.labels, l);
  });
  const Labeled<T> b = SumOut(b_in, [&](int l) {
    return Contains(keep, l) || Contains(a.labels, l);
  });
  std::vector<int> batch, a_only, contracted, b_only;
  for (int l : a.labels) {
    if (!Contains(b.labels, l)) {
      a_only.push_back(l);
    } else if (Contains(keep, l)) {
      batch.push_back(l);
    } else {
      contracted.push_back(l);
    }
  }
  for (int l : b.labels) {
    if (!Contains(a.labels, l)) b_only.push_back(l);
  }
  auto concat = [](std::vector<int> x, const std::vector<int>& y,
                   const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  // Labels in both operands take their broadcast size in each.
  const Labeled<T> left =
      Arrange(a, concat(batch, a_only, contracted), sizes, true);
  const Labeled<T> right =
      Arrange(b, concat(batch, contracted, b_only), sizes, true);
  auto size_of = [&](const std::vector<int>& labels, const Labeled<T>& x) {
    int64_t n = 1;
    for (int l : labels) n *= x.dims[IndexOf(x.labels, l)];
    return n;
  };
  Labeled<T> out;
  out.labels = concat(batch, a_only, b_only);
  for (int l : out.labels) {
    const Labeled<T>& from = Contains(left.labels, l) ? left : right;
    out.dims.push_back(from.dims[IndexOf(from.labels, l)]);
  }
  out.data.resize(Product(out.dims));
  SF_RETURN_IF_ERROR(MatrixProducts(
      size_of(batch, left), size_of(a_only, left), size_of(contracted, left),
      size_of(b_only, right), left.data.data(), right.data.data(),
      out.data.data()));
  return out;
}

}  // namespace

template <typename T>
Labeled<T> FromTensor(const Tensor& tensor, std::vector<int> labels) {
  Labeled<T> x;
  x.dims = tensor.dims();
  x.labels = std::move(labels);
  const T* data = tensor.data<T>();
  x.data.assign(data, data + tensor.numel());
  return x;
}

template <typename T>
absl::StatusOr<Labeled<T>> Evaluate(std::vector<Labeled<T>> operands,
                                    const std::vector<int>& output,
                                    absl::Span<const int64_t> sizes) {
  for (Labeled<T>& x : operands) x = Diagonal(x);
  // Labels needed after operand i: the output's and those of later
  // operands. Operands are folded in from left to right.
  Labeled<T> result = SumOut(operands[0], [&](int l) {
    if (Contains(output, l)) return true;
    for (size_t j = 1; j < operands.size(); ++j) {
      if (Contains(operands[j].labels, l)) return true;
    }
    return false;
  });
  for (size_t i = 1; i < operands.size(); ++i) {
    std::vector<int> keep = output;
    for (size_t j = i + 1; j < operands.size(); ++j) {
      keep.insert(keep.end(), operands[j].labels.begin(),
                  operands[j].labels.end());
    }
    SF_ASSIGN_OR_RETURN(result, Pair(result, operands[i], keep, sizes));
  }
  result = SumOut(result, [&](int l) { return Contains(output, l); });
  return Arrange(result, output, sizes, true);
}

template <typename T>
absl::StatusOr<std::vector<T>> OperandGradient(
    const std::vector<Labeled<T>>& operands, int which,
    const Labeled<T>& out_grad, absl::Span<const int64_t> sizes) {
  const Labeled<T>& x = operands[which];
  // The labels of operand `which` that the output or another operand
  // carries: the gradient varies along those only.
  std::vector<Labeled<T>> others = {out_grad};
  for (size_t j = 0; j < operands.size(); ++j) {
    if (static_cast<int>(j) != which) others.push_back(operands[j]);
  }
  std::vector<int> target;
  for (int l : x.labels) {
    if (Contains(target, l)) continue;
    for (const Labeled<T>& other : others) {
      if (Contains(other.labels, l)) {
        target.push_back(l);
        break;
      }
    }
  }
  SF_ASSIGN_OR_RETURN(Labeled<T> grad, Evaluate(others, target, sizes));
  // Dimensions operand `which` was broadcast along (size 1 there) sum.
  grad = SumOut(grad, [&](int l) {
    return x.dims[IndexOf(x.labels, l)] == grad.dims[IndexOf(grad.labels, l)];
  });
  // Write it onto the diagonals the operand's repeated labels read, and
  // along the labels only it carries (whose gradient is constant).
  const Dims x_strides = StridesOf(x.dims);
  const Dims grad_strides = StridesOf(grad.dims);
  std::vector<int> labels;
  Dims box, to, from;
  for (size_t axis = 0; axis < x.labels.size(); ++axis) {
    const int l = x.labels[axis];
    const int k = IndexOf(labels, l);
    if (k < static_cast<int>(labels.size())) {
      to[k] += x_strides[axis];
      box[k] = std::min(box[k], x.dims[axis]);
      continue;
    }
    labels.push_back(l);
    box.push_back(x.dims[axis]);
    to.push_back(x_strides[axis]);
    const int g = IndexOf(grad.labels, l);
    from.push_back(g < static_cast<int>(grad.labels.size()) ? grad_strides[g]
                                                            : 0);
  }
  std::vector<T> out(Product(x.dims), T(0));
  if (Product(box) > 0) {
    CopyStrided(out.data(), to, grad.data.data(), from, box, sizeof(T));
  }
  return out;
}

#define SF_EINSUM_INSTANTIATE(T)                                              \
  template Labeled<T> FromTensor<T>(const Tensor&, std::vector<int>);         \
  template absl::StatusOr<Labeled<T>> Evaluate<T>(                            \
      std::vector<Labeled<T>>, const std::vector<int>&,                       \
      absl::Span<const int64_t>);                                             \
  template absl::StatusOr<std::vector<T>> OperandGradient<T>(                 \
      const std::vector<Labeled<T>>&, int, const Labeled<T>&,                 \
      absl::Span<const int64_t>);

SF_EINSUM_INSTANTIATE(float)
SF_EINSUM_INSTANTIATE(double)
SF_EINSUM_INSTANTIATE(int32_t)
SF_EINSUM_INSTANTIATE(int64_t)

#undef SF_EINSUM_INSTANTIATE

}  // namespace einsum
}  // namespace scopeflow
