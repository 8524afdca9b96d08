// Recognizes GELU and layer normalization where an exporter wrote them as
// chains of elementwise ONNX nodes, and imports each chain as one op.
//
// torch.onnx writes nn.GELU (below opset 20) and nn.LayerNorm (below opset
// 17) as chains of Div, Erf, Add, Mul and of ReduceMean, Sub, Pow, Sqrt...
// which scopeflow would run as 5 and 9 passes over the activation. The
// chains are recognized here rather than by a pass of Prepare because
// their constants (sqrt(2), 1, 1/2, the exponent 2, epsilon) become
// parameters that a net loads at run time: only the importer sees their
// values, and the chain is the op only for those values.
//
// Recognized, each intermediate value read by the next node of the chain
// alone (and no graph output):
// - GELU: t = Div(x, sqrt(2)) or Mul(x, 1/sqrt(2)); Erf(t); a = Add(erf,
//   1); then Mul(Mul(x, a), 1/2) or Mul(Mul(x, 1/2), a), each Add and Mul
//   with its operands in either order -> Gelu(x).
// - Layer norm over the last axis: m = ReduceMean(x, axes [-1], keepdims);
//   d = Sub(x, m); v = ReduceMean(Pow(d, 2), axes [-1], keepdims);
//   n = Div(d, Sqrt(Add(v, eps))); Add(Mul(n, gamma), beta), with gamma
//   and beta initializers (or Identity nodes of them) of one dim, of more
//   than one element (so of x's last dim: a single element would broadcast
//   where layer_norm's Scale cannot) -> LayerNormalization(x, gamma, beta,
//   axis -1, epsilon eps).
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_FUSE_DECOMPOSED_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_FUSE_DECOMPOSED_H_

#include <vector>

#include "proto/onnx.pb.h"

namespace scopeflow {
namespace onnx_import {

struct FusedNodes {
  // The graph's nodes with each chain recognized replaced, where its last
  // node was, by one node computing the chain's output.
  std::vector<onnx::NodeProto> nodes;
  // Per node of `nodes`, the index of the graph's node it is or replaces
  // (a chain's last node).
  std::vector<int> source;
  int gelus = 0;
  int layer_norms = 0;
};

FusedNodes FuseDecomposedNodes(const onnx::GraphProto& graph);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_FUSE_DECOMPOSED_H_
