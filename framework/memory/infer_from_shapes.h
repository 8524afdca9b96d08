// What a prepared net's variables are for given input shapes, known
// before a run computes any value: the ground a memory plan for fed shapes
// (memory_plan.h) stands on.
#ifndef SCOPEFLOW_FRAMEWORK_MEMORY_INFER_FROM_SHAPES_H_
#define SCOPEFLOW_FRAMEWORK_MEMORY_INFER_FROM_SHAPES_H_

#include <cstdint>
#include <vector>

#include "framework/op_context.h"
#include "framework/prepared_net.h"
#include "framework/tensor.h"

namespace scopeflow {

// The most elements of a value computed while inferring (a shape
// computation's): larger ones are data, not sizes.
inline constexpr int64_t kLargestShapeValue = 1024;

// What the variables of `prepared` are when its inputs and parameters are
// what `infos` says (indexed like prepared.var_infos()). The ops whose
// outputs Prepare did not fully know infer again, in order. The values of
// shape computations are worked out as they go, so that a reshape to a
// size computed from a fed shape (shape, gather, concat: what exporters
// write for a symbolic batch) gets its size: a shape op's value is its
// input's dims, and a pure op (OpSpec::pure) on the host whose inputs all
// have values, with outputs of at most kLargestShapeValue elements, runs
// its kernel on them.
// `bound` (null, or the run's tensors, indexed like var_names()) gives the
// values of the small parameters the net only reads (constants of such
// computations); fed values are never read. An output whose size depends
// on other values (nonzero's, a reshape's to a fed shape tensor) stays
// unknown, as do those computed from it; an op whose inference fails
// leaves its outputs unknown (its run reports the error).
std::vector<VarInfo> InferFromShapes(const PreparedNet& prepared,
                                     std::vector<VarInfo> infos,
                                     const std::vector<Tensor*>* bound = nullptr);

}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_MEMORY_INFER_FROM_SHAPES_H_
