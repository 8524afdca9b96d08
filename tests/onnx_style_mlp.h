// A small MLP written as an ONNX import writes dense layers (matmul, add of
// a bias row, relu), for the tests of the executor's op fusion on each
// place.
#ifndef SCOPEFLOW_TESTS_ONNX_STYLE_MLP_H_
#define SCOPEFLOW_TESTS_ONNX_STYLE_MLP_H_

#include <string>
#include <utility>
#include <vector>

#include "framework/executor.h"
#include "framework/tensor.h"
#include "proto/framework.pb.h"

namespace scopeflow {

struct OnnxStyleMlp {
  // x [-1, 6] -> matmul, add, relu -> h0.relu [-1, 5] -> matmul, add -> h1
  // [-1, 3] -> softmax -> probabilities. h0.product and h0 are the
  // variables fusion removes.
  NetDef net;
  // The persistable weights and biases (w0, b0, w1, b1), seeded, on the CPU.
  std::vector<std::pair<std::string, Tensor>> parameters;
};

OnnxStyleMlp MakeOnnxStyleMlp();

// An input of `batch` rows for the net's "x", seeded, on the CPU.
Tensor OnnxStyleMlpInput(int64_t batch);

// Expects float32 `actual` to hold `expected`'s values within 1e-5
// relative (a fused net's results against the net as written: the sums run
// in another order).
void ExpectNearTensors(const Tensor& actual, const Tensor& expected);

// The types of a prepared net's ops, an fc with a fused relu as "fc+relu".
std::vector<std::string> PreparedOpTypes(const PreparedNet& prepared);

}  // namespace scopeflow

#endif  // SCOPEFLOW_TESTS_ONNX_STYLE_MLP_H_
