// A builder of nets in protobuf text format, for the benchmarks.
#ifndef SCOPEFLOW_TESTS_BENCHMARKS_NET_TEXT_H_
#define SCOPEFLOW_TESTS_BENCHMARKS_NET_TEXT_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/net_io.h"

namespace scopeflow {

// Builds nets in protobuf text format.
class NetText {
 public:
  void Var(const std::string& name, const std::vector<int64_t>& shape,
           bool persistable = false,
           const std::string& dtype = "DATA_TYPE_FLOAT32") {
    std::string dims;
    for (int64_t d : shape) absl::StrAppend(&dims, dims.empty() ? "" : ", ", d);
    absl::StrAppend(&vars_, "vars { name: '", name, "' dtype: ", dtype,
                    " shape: [", dims, "]",
                    persistable ? " persistable: true" : "", " }\n");
  }
  void Op(const std::string& type,
          const std::vector<std::pair<std::string, std::string>>& inputs,
          const std::string& out, const std::string& attrs = "",
          const std::string& out_slot = "Out") {
    absl::StrAppend(&ops_, "ops { type: '", type, "'");
    for (const auto& [slot, var] : inputs) {
      absl::StrAppend(&ops_, " inputs { slot: '", slot, "' vars: '", var,
                      "' }");
    }
    absl::StrAppend(&ops_, " outputs { slot: '", out_slot, "' vars: '", out,
                    "' } ", attrs, " }\n");
  }
  NetDef Build() const {
    absl::StatusOr<NetDef> net = ParseNetText(
        absl::StrCat("format_version: 1 blocks {\n", vars_, ops_, "}"));
    if (!net.ok()) std::abort();
    return *net;
  }

 private:
  std::string vars_;
  std::string ops_;
};

// The CNN of the net and training benchmarks, on input "x" ([N, 3, 64,
// 64]): conv 3->32, conv 32->32, max pool 2x2, conv 32->64, conv 64->64
// (3x3, pad 1, relu after each), global average pool, fc 64->10 into
// "logits". `parameter(name, shape)` declares each parameter (in `net` and
// wherever it is filled). Returns the FLOPs of the convolutions' forward
// pass for one sample (2 per multiply-add).
inline double AddBenchmarkCnn(
    NetText& net,
    const std::function<void(const std::string&, const std::vector<int64_t>&)>&
        parameter) {
  std::string in = "x";
  double flops = 0;
  int64_t spatial = 64;
  const int64_t channels[][2] = {{3, 32}, {32, 32}, {32, 64}, {64, 64}};
  for (int i = 0; i < 4; ++i) {
    const int64_t c = channels[i][0], m = channels[i][1];
    const std::string w = absl::StrCat("conv", i, ".w");
    const std::string b = absl::StrCat("conv", i, ".b");
    parameter(w, {m, c, 3, 3});
    parameter(b, {m});
    const std::string out = absl::StrCat("conv", i);
    net.Op("conv2d", {{"Input", in}, {"Filter", w}, {"Bias", b}}, out,
           "attrs { name: 'paddings' ints { values: [1, 1] } }", "Output");
    net.Op("relu", {{"X", out}}, out + ".relu");
    in = out + ".relu";
    flops += 2.0 * m * c * 9 * spatial * spatial;
    if (i == 1) {
      net.Op("pool2d", {{"X", in}}, "pooled",
             "attrs { name: 'pooling_type' s: 'max' } attrs { name: 'ksize' "
             "ints { values: [2, 2] } } attrs { name: 'strides' ints { "
             "values: [2, 2] } }");
      in = "pooled";
      spatial /= 2;
    }
  }
  net.Op("pool2d", {{"X", in}}, "gap",
         "attrs { name: 'pooling_type' s: 'avg' } attrs { name: 'ksize' ints "
         "{ values: [1, 1] } } attrs { name: 'global_pooling' b: true }");
  parameter("fc.w", {64, 10});
  parameter("fc.b", {10});
  net.Op("fc", {{"X", "gap"}, {"W", "fc.w"}, {"Bias", "fc.b"}}, "logits");
  return flops;
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_TESTS_BENCHMARKS_NET_TEXT_H_
