// A net of three ops that the executor's tests run op by op:
// h = relu(x w); out = softmax(h), x of any number of rows of 3.
#ifndef SCOPEFLOW_TESTS_RELU_SOFTMAX_NET_H_
#define SCOPEFLOW_TESTS_RELU_SOFTMAX_NET_H_

namespace scopeflow {

inline constexpr char kReluSoftmaxNet[] = R"pb(
  format_version: 1
  name: "traced"
  blocks {
    vars {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 3 ]
    }
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 3, 2 ]
    }
    vars {
      name: "xw"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 2 ]
    }
    vars {
      name: "h"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 2 ]
    }
    vars {
      name: "out"
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 2 ]
    }
    ops {
      type: "matmul"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "w" }
      outputs { slot: "Out" vars: "xw" }
    }
    ops {
      type: "relu"
      inputs { slot: "X" vars: "xw" }
      outputs { slot: "Out" vars: "h" }
    }
    ops {
      type: "softmax"
      inputs { slot: "X" vars: "h" }
      outputs { slot: "Out" vars: "out" }
    }
  })pb";

}  // namespace scopeflow

#endif  // SCOPEFLOW_TESTS_RELU_SOFTMAX_NET_H_
