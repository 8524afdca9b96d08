// A builder of nets in protobuf text format, for the benchmarks.
#ifndef SCOPEFLOW_TESTS_BENCHMARKS_NET_TEXT_H_
#define SCOPEFLOW_TESTS_BENCHMARKS_NET_TEXT_H_

#include <cstdlib>
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

}  // namespace scopeflow

#endif  // SCOPEFLOW_TESTS_BENCHMARKS_NET_TEXT_H_
