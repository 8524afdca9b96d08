// A net with a while loop, for the tests of while and of the CUDA place.
#ifndef SCOPEFLOW_OPERATORS_CONTROL_WHILE_COUNTER_NET_H_
#define SCOPEFLOW_OPERATORS_CONTROL_WHILE_COUNTER_NET_H_

namespace scopeflow {

// i counts from 0 to n (fed, int64 [1]); s sums the i of each iteration
// after its increment (a read after a write sees the new version):
// s = 1 + 2 + ... + n. The loop's outputs are i, s and its condition c.
// The blocks only: a test prefixes the net's own fields.
inline constexpr char kCounterLoopBlocks[] = R"pb(
  blocks {
    vars {
      name: "n"
      dtype: DATA_TYPE_INT64
      shape: [ 1 ]
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "i0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
      attrs { name: "dtype" i: 5 }
    }
    ops {
      type: "fill_constant"
      outputs { slot: "Out" vars: "s0" }
      attrs {
        name: "shape"
        i64s { values: [ 1 ] }
      }
      attrs { name: "dtype" i: 5 }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "i0" }
      inputs { slot: "Y" vars: "n" }
      outputs { slot: "Out" vars: "c" }
    }
    ops {
      type: "while"
      inputs { slot: "Condition" vars: "c" }
      inputs { slot: "X" vars: "n" }
      inputs {
        slot: "Init"
        vars: [ "i0", "s0" ]
      }
      outputs {
        slot: "Out"
        vars: [ "i", "s", "c" ]
      }
      attrs { name: "sub_block" block_idx: 1 }
    }
  }
  blocks {
    parent_idx: 0
    ops {
      type: "increment"
      inputs { slot: "X" vars: "i" }
      outputs { slot: "Out" vars: "i" }
    }
    ops {
      type: "add"
      inputs { slot: "X" vars: "s" }
      inputs { slot: "Y" vars: "i" }
      outputs { slot: "Out" vars: "s" }
    }
    ops {
      type: "less"
      inputs { slot: "X" vars: "i" }
      inputs { slot: "Y" vars: "n" }
      outputs { slot: "Out" vars: "c" }
    }
  }
)pb";

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_WHILE_COUNTER_NET_H_
