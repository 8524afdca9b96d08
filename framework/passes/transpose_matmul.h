// Transposes that a matmul or another transpose absorbs.
//
// Exporters write k^T in attention (q @ k.transpose(-2, -1)) and weight
// transposes as Transpose nodes: each copies its input once per run,
// where matmul's transpose_x and transpose_y read the matrix transposed in
// place (the gemm's own transposed operand). So the pass rewrites
// - transpose(S, perm swapping the last two of r >= 2 axes) -> T, then
//   matmul reading T as X (Y) into the matmul reading S as X (Y) with
//   transpose_x (transpose_y) negated;
// - transpose(S, p) -> T, transpose(T, q) -> U with p[q[i]] = i for every
//   i: the ops reading U read S.
// S must be written by at most one op, before the transpose (so the matmul
// or the readers of U see the value the transpose read), and T (U) a
// temporary written by its transpose alone; a run reading U must be of
// the block as written (some op read U). The transposes are left for
// dead_code to remove once nothing reads them.
#ifndef SCOPEFLOW_FRAMEWORK_PASSES_TRANSPOSE_MATMUL_H_
#define SCOPEFLOW_FRAMEWORK_PASSES_TRANSPOSE_MATMUL_H_

#include "framework/passes/pass.h"

namespace scopeflow {

// Named "transpose_matmul"; stateless.
class TransposeMatmulPass final : public GraphPass {
 public:
  absl::string_view name() const override { return "transpose_matmul"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_PASSES_TRANSPOSE_MATMUL_H_
