// The tiny tanh RNN the recurrent tests run: h_t = tanh(x_t W + h_{t-1} U
// + b), with x [T, batch, 1], h0 [batch, 2], W [1, 2], U [2, 2], b [2], all
// fed; Out "hs" stacks h, FinalStates "h_last" is the last step's h.
#ifndef SCOPEFLOW_OPERATORS_CONTROL_RECURRENT_RNN_TEST_NET_H_
#define SCOPEFLOW_OPERATORS_CONTROL_RECURRENT_RNN_TEST_NET_H_

#include <string>

#include "absl/strings/str_replace.h"
#include "framework/net_io.h"
#include "gtest/gtest.h"

namespace scopeflow {

// `x_shape`: the declared shape of x, e.g. "3, 1, 1" or "-1, 1, 1";
// `extra_outputs`: more output slots of the recurrent op (e.g. its
// StepScopes); `dtype`: "FLOAT64" or "FLOAT32".
inline NetDef RnnNet(const std::string& x_shape = "3, 1, 1",
                     const std::string& extra_outputs = "",
                     const std::string& attrs = "",
                     const std::string& dtype = "FLOAT64") {
  const std::string text = absl::StrReplaceAll(
      R"pb(
        format_version: 1
        name: "rnn"
        blocks {
          vars {
            name: "x"
            dtype: DATA_TYPE_$D
            shape: [ $X ]
          }
          vars {
            name: "h0"
            dtype: DATA_TYPE_$D
            shape: [ 1, 2 ]
          }
          vars {
            name: "W"
            dtype: DATA_TYPE_$D
            shape: [ 1, 2 ]
          }
          vars {
            name: "U"
            dtype: DATA_TYPE_$D
            shape: [ 2, 2 ]
          }
          vars {
            name: "b"
            dtype: DATA_TYPE_$D
            shape: [ 2 ]
          }
          ops {
            type: "recurrent"
            inputs { slot: "X" vars: "x" }
            inputs { slot: "InitStates" vars: "h0" }
            inputs {
              slot: "Params"
              vars: [ "W", "U", "b" ]
            }
            outputs { slot: "Out" vars: "hs" }
            outputs { slot: "FinalStates" vars: "h_last" } $O
            attrs { name: "sub_block" block_idx: 1 }
            attrs {
              name: "step_inputs"
              strings { values: "x_t" }
            }
            attrs {
              name: "ex_states"
              strings { values: "h_prev" }
            }
            attrs {
              name: "states"
              strings { values: "h" }
            }
            attrs {
              name: "step_outputs"
              strings { values: "h" }
            } $A
          }
        }
        blocks {
          parent_idx: 0
          vars {
            name: "x_t"
            dtype: DATA_TYPE_$D
            shape: [ 1, 1 ]
          }
          vars {
            name: "h_prev"
            dtype: DATA_TYPE_$D
            shape: [ 1, 2 ]
          }
          ops {
            type: "matmul"
            inputs { slot: "X" vars: "x_t" }
            inputs { slot: "Y" vars: "W" }
            outputs { slot: "Out" vars: "xw" }
          }
          ops {
            type: "matmul"
            inputs { slot: "X" vars: "h_prev" }
            inputs { slot: "Y" vars: "U" }
            outputs { slot: "Out" vars: "hu" }
          }
          ops {
            type: "add"
            inputs { slot: "X" vars: "xw" }
            inputs { slot: "Y" vars: "hu" }
            outputs { slot: "Out" vars: "pre" }
          }
          ops {
            type: "add"
            inputs { slot: "X" vars: "pre" }
            inputs { slot: "Y" vars: "b" }
            outputs { slot: "Out" vars: "pre_b" }
          }
          ops {
            type: "tanh"
            inputs { slot: "X" vars: "pre_b" }
            outputs { slot: "Out" vars: "h" }
          }
        }
      )pb",
      {{"$D", dtype}, {"$X", x_shape}, {"$O", extra_outputs}, {"$A", attrs}});
  absl::StatusOr<NetDef> net = ParseNetText(text);
  EXPECT_TRUE(net.ok()) << net.status();
  return net.ok() ? *net : NetDef();
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_CONTROL_RECURRENT_RNN_TEST_NET_H_
