// Constant folding at import: an op a converter emits whose inputs are all
// known at import time (initializers, Constant outputs, Shape of a value
// whose dims are known, and what earlier folded ops computed from those) is
// run once, on the CPU with scopeflow's own kernel (a shape op, and the
// gather of dims from it, are evaluated from what inference knows of the
// dims, which may be known where the input's value is not), and its outputs become
// constants instead of the op: parameters where an op reads them at run
// time, attributes where a converter needs them so (Reshape's shape).
//
// Exporters write such ops wherever the model computes with its own shape
// (torch's Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains, which
// are constant once the input's dims are) or prepares a weight (Transpose,
// Cast): left in the net each runs at every run, and a Reshape whose shape
// is computed cannot be converted at all.
//
// Folded: pure ops (OpSpec::pure: not random, no control flow, no update
// in place) whose outputs' dims inference knows, and whose outputs take at
// most max(2 x the inputs' bytes, kMaxFoldedGrowthBytes). The bound keeps
// the parameters from growing with broadcasts (Expand, Tile, a fill of a
// shape) that a run computes cheaply from a small input, while a Cast that
// widens a weight (float16 to float32, int32 to int64) or any transpose,
// slice or arithmetic on constants still folds.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_CONSTANT_FOLDING_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_CONSTANT_FOLDING_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "framework/onnx/onnx_importer.h"
#include "framework/op_context.h"
#include "proto/framework.pb.h"

namespace scopeflow {
namespace onnx_import {

// Outputs up to this many bytes fold whatever their inputs' size.
inline constexpr int64_t kMaxFoldedGrowthBytes = 64 << 10;

// The constant value of a variable, or null if it is computed at run time.
using ConstantLookup = std::function<const Tensor*(const std::string& var)>;
// What inference knows of a variable the op writes.
using InfoLookup = std::function<VarInfo(const std::string& var)>;

// What is known of the values of int64 vectors of dims computed at run time
// (a shape op's output where its input's rank is known): per element, the
// dim, or -1 where it is unknown until run time.
using DimsValues = absl::flat_hash_map<std::string, std::vector<int64_t>>;

// The shape op, the size op where its input's dims are all known, and a
// gather of elements of a dims vector at constant indices (exporters write
// Shape -> Gather to take one dim): records what
// the op's output holds in `dims_values` and returns it as a constant where
// every element is known, else nullopt (as for any other op).
std::optional<NamedTensor> FoldDims(const OpDef& op,
                                    const ConstantLookup& constant,
                                    const InfoLookup& info,
                                    DimsValues& dims_values);

// Runs `op` once where it folds (see the file comment): every variable it
// reads is a constant. Returns its outputs by name, or nullopt where the op
// is not to be folded. An error is the kernel's, with the op named.
absl::StatusOr<std::optional<std::vector<NamedTensor>>> FoldOp(
    const OpDef& op, const ConstantLookup& constant, const InfoLookup& info);

// Removes the pure ops of `block` whose outputs no op reads and no graph
// output (`outputs`) is: what folding left computing the dims nothing reads
// any more (a shape op whose gathers folded), or what the model computed
// and ignored. Then the parameters nothing reads go from the block's
// variables and from `params`.
void RemoveUnreadOps(const absl::flat_hash_set<std::string>& outputs,
                     BlockDef& block, std::vector<NamedTensor>& params);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_CONSTANT_FOLDING_H_
