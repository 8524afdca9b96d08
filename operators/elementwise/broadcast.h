// numpy-style broadcasting for the elementwise ops: shape inference and the
// loops kernels run over two or three broadcast operands.
//
// The loops take the operation as a functor type, so it is inlined: no call
// per element. Fast paths come first: operands with as many elements as the
// output (then their elements line up one to one) and single-element
// operands run as plain loops the compiler vectorizes; other shapes run
// row by row over a plan whose dimensions are collapsed as far as the
// strides allow.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/data_type.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "operators/elementwise/vector_loops.h"
#include "platform/parallel.h"

namespace scopeflow {
namespace elementwise {

// Sets output `out` to dtype `dtype` and the broadcast shape of the inputs
// of `slots`. An input of unknown rank makes the output's rank unknown;
// unknown dimensions (-1) broadcast with anything. When the shapes do not
// broadcast, an InvalidArgument error names each slot, its variable and its
// shape.
absl::Status InferBroadcast(InferContext& context,
                            std::initializer_list<absl::string_view> slots,
                            DataType dtype, absl::string_view out = "Out");

// Where each operand's elements lie in an iteration over the output:
// dimension d of the (collapsed) iteration space has size dims[d], and
// stepping along it moves operand k by strides[k][d] elements (0 where the
// operand is broadcast). Always at least one dimension; the innermost
// strides are 0 or 1.
struct BroadcastPlan {
  static constexpr int kMaxOperands = 3;
  Dims dims;
  std::array<Dims, kMaxOperands> strides;
};

// The plan for operands of shapes `operands` (at most kMaxOperands, each
// broadcastable to `out_dims`). Dimensions of size 1 are dropped and
// neighbours that every operand walks contiguously (or not at all) merged.
BroadcastPlan MakeBroadcastPlan(
    absl::Span<const int64_t> out_dims,
    std::initializer_list<absl::Span<const int64_t>> operands);

// The number of innermost rows of `plan`.
inline int64_t RowCount(const BroadcastPlan& plan) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < plan.dims.size(); ++d) rows *= plan.dims[d];
  return rows;
}

// Calls row(out_offset, offsets, n) for each innermost row r of `plan` with
// first_row <= r < end_row, in row-major order: the row's first output
// element, each operand's first element and the row length.
template <typename Row>
void ForEachRowIn(const BroadcastPlan& plan, int num_operands,
                  int64_t first_row, int64_t end_row, Row row) {
  const int outer = static_cast<int>(plan.dims.size()) - 1;
  const int64_t n = plan.dims[outer];
  // The odometer over the outer dimensions, started at first_row.
  Dims index(outer, 0);
  std::array<int64_t, BroadcastPlan::kMaxOperands> offsets{};
  int64_t rest = first_row;
  for (int d = outer - 1; d >= 0; --d) {
    index[d] = rest % plan.dims[d];
    rest /= plan.dims[d];
    for (int k = 0; k < num_operands; ++k) {
      offsets[k] += index[d] * plan.strides[k][d];
    }
  }
  for (int64_t r = first_row, out_offset = first_row * n; r < end_row;
       ++r, out_offset += n) {
    row(out_offset, offsets, n);
    for (int d = outer - 1; d >= 0; --d) {
      for (int k = 0; k < num_operands; ++k) offsets[k] += plan.strides[k][d];
      if (++index[d] < plan.dims[d]) break;
      for (int k = 0; k < num_operands; ++k) {
        offsets[k] -= plan.strides[k][d] * plan.dims[d];
      }
      index[d] = 0;
    }
  }
}

// ForEachRowIn over every row, on the calling thread.
template <typename Row>
void ForEachRow(const BroadcastPlan& plan, int num_operands, Row row) {
  ForEachRowIn(plan, num_operands, 0, RowCount(plan), row);
}

// ForEachRowIn over every row, the rows spread over threads in ranges of
// at least kElementsWorthAThread elements. Rows write disjoint outputs.
template <typename Row>
void ForEachRowInParallel(const BroadcastPlan& plan, int num_operands,
                          Row row) {
  const int64_t n = plan.dims.back();
  ParallelFor(RowCount(plan), (kElementsWorthAThread + n - 1) / n,
              [&](int64_t begin, int64_t end) {
                ForEachRowIn(plan, num_operands, begin, end, row);
              });
}

// out[j] = op(x[j * x_step], y[j * y_step]) for j < n, steps 0 or 1. Each
// case is a plain loop, so the compiler vectorizes those it can. Always
// inlined, so that in a function marked SF_WIDEST_VECTORS the loops take
// that function's vectors (see vector_loops.h).
template <typename T, typename R, typename Op>
inline __attribute__((always_inline)) void BinaryRow(const T* x, bool x_step,
                                                     const T* y, bool y_step,
                                                     R* out, int64_t n, Op op) {
  if (x_step && y_step) {
    for (int64_t j = 0; j < n; ++j) out[j] = op(x[j], y[j]);
  } else if (x_step) {
    const T b = *y;
    for (int64_t j = 0; j < n; ++j) out[j] = op(x[j], b);
  } else if (y_step) {
    const T a = *x;
    for (int64_t j = 0; j < n; ++j) out[j] = op(a, y[j]);
  } else {
    std::fill(out, out + n, static_cast<R>(op(*x, *y)));
  }
}

// BinaryRow with the op that `op` holds.
template <typename T, typename R, typename... Ops>
inline __attribute__((always_inline)) void BinaryRow(
    const T* x, bool x_step, const T* y, bool y_step, R* out, int64_t n,
    const std::variant<Ops...>& op) {
  VisitInline(
      op, [&](auto o) __attribute__((always_inline)) {
        BinaryRow(x, x_step, y, y_step, out, n, o);
      });
}

// Out = op(X, Y) elementwise over the broadcast of x and y; `out` already
// has the broadcast shape. Out may be X or Y itself (same buffer), as the
// loops read each element before writing the one at its position. Runs of
// elements go through row(x, x_step, y, y_step, out, n), which computes
// what BinaryRow(x, x_step, y, y_step, out, n, op) does (a version of it
// built for wider vectors, say).
template <typename T, typename R, typename Op, typename Row>
void BroadcastBinary(const Tensor& x, const Tensor& y, Tensor* out, Op op,
                     Row row) {
  const int64_t n = out->numel();
  const T* xs = x.data<T>();
  const T* ys = y.data<T>();
  R* os = out->data<R>();
  if (n <= 1) {  // Skips the vector loop's set-up for single elements.
    if (n == 1) *os = op(*xs, *ys);
    return;
  }
  const bool x_full = x.numel() == n;
  const bool y_full = y.numel() == n;
  if ((x_full || x.numel() == 1) && (y_full || y.numel() == 1)) {
    ParallelFor(n, kElementsWorthAThread, [&](int64_t begin, int64_t end) {
      row(xs + (x_full ? begin : 0), x_full, ys + (y_full ? begin : 0), y_full,
          os + begin, end - begin);
    });
    return;
  }
  const BroadcastPlan plan =
      MakeBroadcastPlan(out->dims(), {x.dims(), y.dims()});
  const bool x_step = plan.strides[0].back() != 0;
  const bool y_step = plan.strides[1].back() != 0;
  ForEachRowInParallel(
      plan, 2, [&](int64_t o, const auto& offsets, int64_t len) {
        row(xs + offsets[0], x_step, ys + offsets[1], y_step, os + o, len);
      });
}

// BroadcastBinary with BinaryRow compiled for the build's vectors.
template <typename T, typename R, typename Op>
void BroadcastBinary(const Tensor& x, const Tensor& y, Tensor* out,
                     Op op = Op()) {
  BroadcastBinary<T, R>(
      x, y, out, op,
      [op](const T* a, bool a_step, const T* b, bool b_step, R* o, int64_t n) {
        BinaryRow(a, a_step, b, b_step, o, n, op);
      });
}

// out[j] = op(a[j * a_step], b[j * b_step], c[j * c_step]) for j < n.
template <typename A, typename B, typename R, typename Op>
inline void TernaryRow(const A* a, int64_t a_step, const B* b, int64_t b_step,
                       const B* c, int64_t c_step, R* out, int64_t n, Op op) {
  if (a_step == 1 && b_step == 1 && c_step == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = op(a[j], b[j], c[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) {
      out[j] = op(a[j * a_step], b[j * b_step], c[j * c_step]);
    }
  }
}

// Out = op(A, B, C) elementwise over the broadcast of a, b and c (b and c of
// one element type); `out` already has the broadcast shape.
template <typename A, typename B, typename R, typename Op>
void BroadcastTernary(const Tensor& a, const Tensor& b, const Tensor& c,
                      Tensor* out, Op op = Op()) {
  const int64_t n = out->numel();
  if (n == 0) return;
  const A* as = a.data<A>();
  const B* bs = b.data<B>();
  const B* cs = c.data<B>();
  R* os = out->data<R>();
  auto step = [n](const Tensor& t) -> int64_t { return t.numel() == n; };
  if ((a.numel() == n || a.numel() == 1) &&
      (b.numel() == n || b.numel() == 1) &&
      (c.numel() == n || c.numel() == 1)) {
    ParallelFor(n, kElementsWorthAThread, [&](int64_t begin, int64_t end) {
      TernaryRow(as + step(a) * begin, step(a), bs + step(b) * begin, step(b),
                 cs + step(c) * begin, step(c), os + begin, end - begin, op);
    });
    return;
  }
  const BroadcastPlan plan =
      MakeBroadcastPlan(out->dims(), {a.dims(), b.dims(), c.dims()});
  const int64_t a_step = plan.strides[0].back();
  const int64_t b_step = plan.strides[1].back();
  const int64_t c_step = plan.strides[2].back();
  ForEachRowInParallel(
      plan, 3, [&](int64_t o, const auto& offsets, int64_t len) {
        TernaryRow(as + offsets[0], a_step, bs + offsets[1], b_step,
                   cs + offsets[2], c_step, os + o, len, op);
      });
}

// For gradient ops of broadcast ops: OK if input `grad` (the gradient of
// the forward output) has the dtype of the input of slots.begin() and the
// broadcast shape of the inputs of `slots`, unknown dimensions matching
// anything. The kernels index the gradient by that shape, so a mismatch is
// an InvalidArgument error naming the variables and their shapes.
absl::Status CheckBroadcastGrad(const InferContext& context,
                                std::initializer_list<absl::string_view> slots,
                                absl::string_view grad = "Out@GRAD");

// Whether an operand of shape `dims` broadcasts to `out_dims` as one block
// repeated along the leading dimensions (a bias [C] against [N, C]): after
// its leading 1s, its dimensions are the last ones of `out_dims`.
bool IsTrailingBlock(absl::Span<const int64_t> dims,
                     absl::Span<const int64_t> out_dims);

// The sum of f(j) for 0 <= j < n. The compiler may not reorder a
// floating-point sum, so one accumulator would make every addition wait for
// the previous one; kLanes independent partial sums let the loop pipeline
// and vectorize (and add fewer rounding errors into each).
template <typename T, typename F>
T SumOf(int64_t n, F f) {
  constexpr int kLanes = 8;
  T lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) lanes[k] += f(j + k);
  }
  for (int k = 0; j < n; ++j, ++k) lanes[k] += f(j);
  T sum = T{0};
  for (int k = 0; k < kLanes; ++k) sum += lanes[k];
  return sum;
}

// The gradient of operand A of a broadcast op, reduced to A's shape: for
// every element o of the output (shape `out_dims`, row-major), with a and b
// the offsets of its elements in operands A and B (shapes `a_dims` and
// `b_dims`, each broadcastable to `out_dims`), grad[a] gets the sum of
// term(o, a, b) over all o. `grad` has A's shape and is overwritten; every
// element that no o reads (only possible when the output is empty) gets 0.
//
// This is the one place where the gradients of broadcast ops are summed
// over the broadcast dimensions. Common layouts (A as large as the output,
// A a single element, A a bias-like trailing block with B as large as the
// output) run as plain loops; others go row by row over a BroadcastPlan.
template <typename T, typename Term>
void ReduceBroadcastGrad(absl::Span<const int64_t> out_dims,
                         absl::Span<const int64_t> a_dims,
                         absl::Span<const int64_t> b_dims, T* grad, Term term) {
  const int64_t n = NumElements(out_dims);
  const int64_t a_n = NumElements(a_dims);
  const int64_t b_n = NumElements(b_dims);
  if (a_n == n) {
    // A broadcastable operand as large as the output is not broadcast: its
    // elements line up with the output's one to one.
    if (b_n == n) {
      ParallelFor(n, kElementsWorthAThread, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) grad[o] = term(o, o, o);
      });
      return;
    }
    if (b_n == 1) {
      ParallelFor(n, kElementsWorthAThread, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          grad[o] = term(o, o, int64_t{0});
        }
      });
      return;
    }
    if (IsTrailingBlock(b_dims, out_dims)) {
      for (int64_t row = 0; row < n; row += b_n) {
        for (int64_t j = 0; j < b_n; ++j) {
          grad[row + j] = term(row + j, row + j, j);
        }
      }
      return;
    }
  } else if (a_n == 1 && (b_n == n || b_n == 1)) {
    if (b_n == n) {
      *grad = SumOf<T>(n, [&](int64_t o) { return term(o, int64_t{0}, o); });
    } else {
      *grad = SumOf<T>(
          n, [&](int64_t o) { return term(o, int64_t{0}, int64_t{0}); });
    }
    return;
  }
  std::fill(grad, grad + a_n, T{0});
  if (n == 0) return;
  if (b_n == n && IsTrailingBlock(a_dims, out_dims)) {
    // A bias: each row of the output adds one contribution to every element.
    // On one thread: the gradient of a bias row of [64, 1024] (64 Ki floats,
    // in the caches) took longer with two threads taking blocks of columns
    // (elementwise_benchmark's BM_AddGradBiasRow).
    for (int64_t row = 0; row < n; row += a_n) {
      for (int64_t j = 0; j < a_n; ++j) grad[j] += term(row + j, j, row + j);
    }
    return;
  }
  const BroadcastPlan plan = MakeBroadcastPlan(out_dims, {a_dims, b_dims});
  const bool a_step = plan.strides[0].back() != 0;
  const bool b_step = plan.strides[1].back() != 0;
  ForEachRow(plan, 2, [&](int64_t o, const auto& offsets, int64_t len) {
    const int64_t a = offsets[0];
    const int64_t b = offsets[1];
    if (a_step) {
      if (b_step) {
        for (int64_t j = 0; j < len; ++j) {
          grad[a + j] += term(o + j, a + j, b + j);
        }
      } else {
        for (int64_t j = 0; j < len; ++j) grad[a + j] += term(o + j, a + j, b);
      }
    } else {
      // The whole row reduces into one element of A.
      if (b_step) {
        grad[a] +=
            SumOf<T>(len, [&](int64_t j) { return term(o + j, a, b + j); });
      } else {
        grad[a] += SumOf<T>(len, [&](int64_t j) { return term(o + j, a, b); });
      }
    }
  });
}

// The gradients of a binary broadcast op Out = f(X, Y): `dx` (if not null,
// X's shape) gets grad.dx(x, y, dout) summed over the broadcast to X's
// shape, `dy` (if not null, Y's shape) grad.dy(x, y, dout) summed to Y's.
// `dout` has the broadcast shape.
template <typename T, typename Grad>
void BroadcastBinaryGrad(const Tensor& x, const Tensor& y, const Tensor& dout,
                         Tensor* dx, Tensor* dy, Grad grad = Grad()) {
  const T* xs = x.data<T>();
  const T* ys = y.data<T>();
  const T* gs = dout.data<T>();
  const int64_t n = dout.numel();
  if (dx != nullptr && dy != nullptr && x.numel() == n && y.numel() == n) {
    // No broadcast: one pass reads each input element once for both.
    T* dxs = dx->data<T>();
    T* dys = dy->data<T>();
    ParallelFor(n, kElementsWorthAThread, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        dxs[o] = grad.dx(xs[o], ys[o], gs[o]);
        dys[o] = grad.dy(xs[o], ys[o], gs[o]);
      }
    });
    return;
  }
  if (dx != nullptr) {
    ReduceBroadcastGrad<T>(dout.dims(), x.dims(), y.dims(), dx->data<T>(),
                           [&](int64_t o, int64_t a, int64_t b) {
                             return grad.dx(xs[a], ys[b], gs[o]);
                           });
  }
  if (dy != nullptr) {
    ReduceBroadcastGrad<T>(dout.dims(), y.dims(), x.dims(), dy->data<T>(),
                           [&](int64_t o, int64_t a, int64_t b) {
                             return grad.dy(xs[b], ys[a], gs[o]);
                           });
  }
}

}  // namespace elementwise
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_H_
