// Elementwise loops for the functions marked SF_WIDEST_VECTORS
// (platform/vector_clones.h), the ops that select them, and the kernel of
// one-input maps that dispatches to them.
//
// GCC clones only non-template functions reliably, and compiles only a
// clone's own body for its vectors: a loop left in a function it calls runs
// on the baseline's. So a kernel template hands its op, as a std::variant of
// the ops whose loops vectorize, to one non-template function per dtype,
// and everything between that function and the loop is always inlined.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_VECTOR_LOOPS_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_VECTOR_LOOPS_H_

#include <cstdint>
#include <type_traits>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "framework/op_context.h"
#include "framework/tensor.h"
#include "platform/parallel.h"

// Marks an op's operator() that the loops of the SF_WIDEST_VECTORS
// functions call: inlined into each clone, so that the op's body is compiled
// for the clone's vectors. Unmarked, GCC may keep a large op out of line
// (exact gelu's, elu's, softplus's), and each clone then calls the
// baseline's scalar code once per element: exact gelu 16 ns per float
// instead of 1.5. (flatten on the cloned function does not do it: GCC does
// not flatten target_clones.)
#define SF_VECTOR_OP inline __attribute__((always_inline))

namespace scopeflow {
namespace elementwise {

// Whether F is one of the alternatives of Variant, a std::variant.
template <typename F, typename Variant>
constexpr bool kHolds = false;

template <typename F, typename... Ops>
constexpr bool kHolds<F, std::variant<Ops...>> =
    std::disjunction_v<std::is_same<F, Ops>...>;

// Calls f with a copy of the op that `ops` holds. The copy, a local, keeps
// the op's parameters (a bound, a factor) out of the memory that the loop's
// stores might alias, so they stay in registers. A chain of tests rather
// than std::visit, whose calls GCC need not inline.
template <typename... Ops, typename F>
inline __attribute__((always_inline)) void VisitInline(
    const std::variant<Ops...>& ops, F f) {
  (void)((std::holds_alternative<Ops>(ops) &&
          (f(*std::get_if<Ops>(&ops)), true)) ||
         ...);
}

// out[i] = f(in[i]) for 0 <= i < n. Out may be In itself (same buffer):
// each element is read before it is written, and GCC's run-time overlap
// check keeps the vector loop for that case.
template <typename T, typename F>
inline __attribute__((always_inline)) void MapInto(const T* in, T* out,
                                                   int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

// MapInto with the op that `f` holds.
template <typename T, typename... Fs>
inline __attribute__((always_inline)) void MapInto(
    const T* in, T* out, int64_t n, const std::variant<Fs...>& f) {
  const auto map = [&](auto op) __attribute__((always_inline)) {
    MapInto(in, out, n, op);
  };
  VisitInline(f, map);
}

// out[i] = f(a[i], b[i]) for 0 <= i < n. Out may be A or B itself, as for
// MapInto.
template <typename T, typename F>
inline __attribute__((always_inline)) void MapPairsInto(const T* a, const T* b,
                                                        T* out, int64_t n,
                                                        F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

// MapPairsInto with the op that `f` holds.
template <typename T, typename... Fs>
inline __attribute__((always_inline)) void MapPairsInto(
    const T* a, const T* b, T* out, int64_t n, const std::variant<Fs...>& f) {
  const auto map = [&](auto op) __attribute__((always_inline)) {
    MapPairsInto(a, b, out, n, op);
  };
  VisitInline(f, map);
}

// Out[i] = f(X[i]) for input "X" and output "Out" of dtype T and one
// shape, over threads for large X. For float T and an op F among the
// alternatives of Ops, each thread's range goes through
// widest(in, out, n, Ops(f)), which calls the caller's SF_WIDEST_VECTORS
// function for T; other ops and dtypes run MapInto as the build compiles
// it.
template <typename T, typename Ops, typename F, typename Widest>
absl::Status MapKernel(KernelContext& context, F f, Widest widest) {
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  T* out = context.Output("Out")->data<T>();
  ParallelFor(x.numel(), kElementsWorthAThread,
              [&](int64_t begin, int64_t end) {
                if constexpr (std::is_floating_point_v<T> && kHolds<F, Ops>) {
                  widest(in + begin, out + begin, end - begin, Ops(f));
                } else {
                  MapInto(in + begin, out + begin, end - begin, f);
                }
              });
  return absl::OkStatus();
}

// X@GRAD[i] = f(V[i], Out@GRAD[i]) for the input V named `reads` ("X" or
// "Out", whichever the derivative is cheaper from) of dtype T; nothing
// where X@GRAD is not wanted. Over threads for large inputs; for float T
// and an op F among the alternatives of Ops, each thread's range goes
// through widest(v, g, out, n, Ops(f)), as in MapKernel.
template <typename T, typename Ops, typename F, typename Widest>
absl::Status MapGradKernel(KernelContext& context, absl::string_view reads, F f,
                           Widest widest) {
  if (!context.HasOutput("X@GRAD")) return absl::OkStatus();
  const T* v = context.Input(reads).data<T>();
  const T* g = context.Input("Out@GRAD").data<T>();
  Tensor* dx = context.Output("X@GRAD");
  T* out = dx->data<T>();
  ParallelFor(
      dx->numel(), kElementsWorthAThread, [&](int64_t begin, int64_t end) {
        if constexpr (std::is_floating_point_v<T> && kHolds<F, Ops>) {
          widest(v + begin, g + begin, out + begin, end - begin, Ops(f));
        } else {
          MapPairsInto(v + begin, g + begin, out + begin, end - begin, f);
        }
      });
  return absl::OkStatus();
}

}  // namespace elementwise
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_VECTOR_LOOPS_H_
