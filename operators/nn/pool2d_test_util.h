#ifndef SCOPEFLOW_OPERATORS_NN_POOL2D_TEST_UTIL_H_
#define SCOPEFLOW_OPERATORS_NN_POOL2D_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/op_test_util.h"

namespace scopeflow {

// A pool2d op reading "x" and writing "y", with `attrs` in text format.
inline std::string PoolOp(const std::string& attrs) {
  return absl::StrCat(
      R"pb(type: "pool2d"
           inputs { slot: "X" vars: "x" }
           outputs { slot: "Out" vars: "y" })pb",
      attrs);
}

// The attribute `name` holding the ints `values`, in text format.
inline std::string Ints(const std::string& name,
                        const std::vector<int32_t>& values) {
  return absl::StrCat("attrs { name: \"", name, "\" ints { values: [",
                      absl::StrJoin(values, ", "), "] } } ");
}

// The pooling_type attribute `type`, in text format.
inline std::string Type(const std::string& type) {
  return absl::StrCat("attrs { name: \"pooling_type\" s: \"", type,
                      "\" } ");
}

// start, start + 1, ..., n values.
inline std::vector<float> Iota(int n, float start = 0) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = start + i;
  return values;
}

// 1..9 as a [1, 1, 3, 3] image.
inline Tensor OneToNine() {
  return MakeTensor<float>({1, 1, 3, 3}, Iota(9, 1));
}

}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_POOL2D_TEST_UTIL_H_
