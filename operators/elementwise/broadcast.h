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

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "framework/data_type.h"
#include "framework/op_context.h"
#include "framework/tensor.h"

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

// Calls row(out_offset, offsets, n) for each innermost row of `plan`, in
// row-major order: the row's first output element, each operand's first
// element and the row length.
template <typename Row>
void ForEachRow(const BroadcastPlan& plan, int num_operands, Row row) {
  const int outer = static_cast<int>(plan.dims.size()) - 1;
  const int64_t n = plan.dims[outer];
  int64_t rows = 1;
  for (int d = 0; d < outer; ++d) rows *= plan.dims[d];
  Dims index(outer, 0);
  std::array<int64_t, BroadcastPlan::kMaxOperands> offsets{};
  for (int64_t r = 0, out_offset = 0; r < rows; ++r, out_offset += n) {
    row(out_offset, offsets, n);
    // Advances the odometer over the outer dimensions.
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

// out[j] = op(x[j * x_step], y[j * y_step]) for j < n, steps 0 or 1. Each
// case is a plain loop, so the compiler vectorizes those it can.
template <typename T, typename R, typename Op>
inline void BinaryRow(const T* x, bool x_step, const T* y, bool y_step, R* out,
                      int64_t n, Op op) {
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

// Out = op(X, Y) elementwise over the broadcast of x and y; `out` already
// has the broadcast shape. Out may be X or Y itself (same buffer), as the
// loops read each element before writing the one at its position.
template <typename T, typename R, typename Op>
void BroadcastBinary(const Tensor& x, const Tensor& y, Tensor* out,
                     Op op = Op()) {
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
    BinaryRow(xs, x_full, ys, y_full, os, n, op);
    return;
  }
  const BroadcastPlan plan =
      MakeBroadcastPlan(out->dims(), {x.dims(), y.dims()});
  const bool x_step = plan.strides[0].back() != 0;
  const bool y_step = plan.strides[1].back() != 0;
  ForEachRow(plan, 2, [&](int64_t o, const auto& offsets, int64_t len) {
    BinaryRow(xs + offsets[0], x_step, ys + offsets[1], y_step, os + o, len,
              op);
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
    TernaryRow(as, step(a), bs, step(b), cs, step(c), os, n, op);
    return;
  }
  const BroadcastPlan plan =
      MakeBroadcastPlan(out->dims(), {a.dims(), b.dims(), c.dims()});
  const int64_t a_step = plan.strides[0].back();
  const int64_t b_step = plan.strides[1].back();
  const int64_t c_step = plan.strides[2].back();
  ForEachRow(plan, 3, [&](int64_t o, const auto& offsets, int64_t len) {
    TernaryRow(as + offsets[0], a_step, bs + offsets[1], b_step,
               cs + offsets[2], c_step, os + o, len, op);
  });
}

}  // namespace elementwise
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_BROADCAST_H_
