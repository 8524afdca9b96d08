#include "framework/onnx/converters.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace scopeflow {
namespace onnx_import {
namespace {

ConverterMap MakeConverters() {
  ConverterMap map;
  AddElementwiseConverters(map);
  AddNnConverters(map);
  AddShapeConverters(map);
  AddReduceConverters(map);
  AddResizeConverters(map);
  AddConvTransposeConverters(map);
  AddRecurrentConverters(map);
  AddMoreElementwiseConverters(map);
  AddTensorOpConverters(map);
  AddGroupNormConverters(map);
  return map;
}

}  // namespace

const ConverterMap& Converters() {
  // Built on first use (thread-safe), as OpRegistry::Global() is.
  static const ConverterMap map = MakeConverters();
  return map;
}

std::string NoConverterReason(const std::string& op_type) {
  // Ops that models commonly hold, with the scopeflow op each would need.
  static const absl::flat_hash_map<std::string, std::string> kMissing = {
      {"ReduceLogSum", "scopeflow has no reduce_log_sum op"},
      {"ReduceSumSquare", "scopeflow has no reduce_sum_square op"},
      {"ScatterND", "scopeflow has no scatter_nd op"},
      {"GatherND", "scopeflow has no gather_nd op"},
      {"GatherElements", "scopeflow has no gather_elements op"},
      {"TopK", "scopeflow has no top_k op"},
      {"NonZero", "scopeflow has no nonzero op"},
      {"If", "scopeflow has no converter for control flow (If)"},
      {"Loop", "scopeflow has no converter for control flow (Loop)"},
  };
  auto it = kMissing.find(op_type);
  if (it != kMissing.end()) return it->second;
  return absl::StrCat("no converter for ONNX op ", op_type,
                      " (scopeflow has no matching op)");
}

}  // namespace onnx_import
}  // namespace scopeflow
