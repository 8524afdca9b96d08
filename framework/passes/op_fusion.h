// Op fusion: the executor merges ops a net writes apart into one fc.
//
// A fully connected layer imported from ONNX is two ops, a matrix product
// (MatMul) and the bias added to each of its rows (Add), and most layers
// are followed by a relu: three passes over the layer's output where one
// does. fc adds the bias and, with activation_type "relu", applies the
// relu in one pass right after the product, while the output is still in
// the caches (on a GPU: one op's dispatch and two kernels where there were
// three ops). So, on every place, Prepare fuses (PrepareOptions::fuse_ops):
// - a matmul whose output only an add reads, with the other operand of the
//   add a bias: matmul(X, Y) without transposition and alpha 1, Y of rank
//   2, X of rank 2 or more, the bias holding one value per column of Y (of
//   dims [n], [1, n]...) and the add's output of the product's dims, into
//   fc(X, W = Y, Bias) with in_num_col_dims = rank(X) - 1;
// - an fc without activation whose output only a relu reads into fc with
//   activation_type "relu", writing the relu's output; on the CPU, one
//   whose output only a gelu reads into fc with activation_type "gelu"
//   ("gelu_tanh" for a gelu with "approximate"): the gelu of transformers'
//   and ConvNeXt's feed-forward layers runs on the product's rows while
//   they are in the caches, instead of in a pass of its own.
// Only float32 and float64, fc's dtypes. The variable between two fused ops
// must be a temporary that one op writes and one reads (not persistable,
// nothing else in the block reading or writing it), and no op between the
// two may write what the first reads: the fused op runs where the second
// op was. The variable is gone from the fused block, so a run that fetches
// it runs the block as written (PreparedNet::PlanFor), as for the layout
// rewrite.
#ifndef SCOPEFLOW_FRAMEWORK_OP_FUSION_H_
#define SCOPEFLOW_FRAMEWORK_OP_FUSION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "framework/op_context.h"
#include "framework/passes/pass.h"
#include "proto/framework.pb.h"

namespace scopeflow {

struct OpFusion {
  BlockDef block;
  // Per op of `block`, the index of the op of the original block it comes
  // from (for a fused op, the first of the ops fused), for error messages.
  std::vector<int> source_op;
  // How many ops the fusion removed.
  int ops_removed = 0;
};

// `block` with its fusible ops fused, or nullopt where none are. `infos`
// gives inference's dtype and dims of the block's variables by name (a
// variable absent or of unknown rank is fused only where its rank does not
// matter). Fuses gelus into fcs only where `gelu` (fc's CPU kernel fuses
// them, its CUDA kernel does not). Expects a block that Prepare has
// accepted.
std::optional<OpFusion> FuseOps(
    const BlockDef& block,
    const absl::flat_hash_map<std::string, VarInfo>& infos, bool gelu = true);

// The fusion as a pass of Prepare (PrepareOptions::fuse_ops), named
// "op_fusion"; it reads the variables' dtypes and dims from the prepared
// block.
class OpFusionPass final : public GraphPass {
 public:
  absl::string_view name() const override { return "op_fusion"; }
  absl::StatusOr<bool> Run(PassBlock& block,
                           const PassContext& context) const override;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_OP_FUSION_H_
