#include "framework/onnx/old_opsets.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "framework/onnx/onnx_importer.h"

namespace scopeflow {
namespace onnx_import {
namespace {

// For every op of the default domain defined by opset 7: the opset that
// introduced the version in effect at opset 7 (ONNX's since_version, from
// onnx.defs.get_all_schemas_with_history()). Ops introduced later cannot
// appear in a model older than 7.
const absl::flat_hash_map<std::string, int64_t>& VersionAtOpset7() {
  static const auto* const versions = new absl::flat_hash_map<
      std::string, int64_t>({
      {"Abs", 6}, {"Acos", 7}, {"Add", 7}, {"And", 7}, {"ArgMax", 1},
      {"ArgMin", 1}, {"Asin", 7}, {"Atan", 7}, {"AveragePool", 7},
      {"BatchNormalization", 7}, {"Cast", 6}, {"Ceil", 6}, {"Clip", 6},
      {"Concat", 4}, {"Constant", 1}, {"Conv", 1}, {"ConvTranspose", 1},
      {"Cos", 7}, {"DepthToSpace", 1}, {"Div", 7}, {"Dropout", 7}, {"Elu", 6},
      {"Equal", 7}, {"Exp", 6}, {"Flatten", 1}, {"Floor", 6}, {"GRU", 7},
      {"Gather", 1}, {"Gemm", 7}, {"GlobalAveragePool", 1},
      {"GlobalLpPool", 2}, {"GlobalMaxPool", 1}, {"Greater", 7},
      {"HardSigmoid", 6}, {"Hardmax", 1}, {"Identity", 1}, {"If", 1},
      {"InstanceNormalization", 6}, {"LRN", 1}, {"LSTM", 7}, {"LeakyRelu", 6},
      {"Less", 7}, {"Log", 6}, {"LogSoftmax", 1}, {"Loop", 1},
      {"LpNormalization", 1}, {"LpPool", 2}, {"MatMul", 1}, {"Max", 6},
      {"MaxPool", 1}, {"MaxRoiPool", 1}, {"Mean", 6}, {"Min", 6}, {"Mul", 7},
      {"Multinomial", 7}, {"Neg", 6}, {"Not", 1}, {"Or", 7}, {"PRelu", 7},
      {"Pad", 2}, {"Pow", 7}, {"RNN", 7}, {"RandomNormal", 1},
      {"RandomNormalLike", 1}, {"RandomUniform", 1}, {"RandomUniformLike", 1},
      {"Reciprocal", 6}, {"ReduceL1", 1}, {"ReduceL2", 1}, {"ReduceLogSum", 1},
      {"ReduceLogSumExp", 1}, {"ReduceMax", 1}, {"ReduceMean", 1},
      {"ReduceMin", 1}, {"ReduceProd", 1}, {"ReduceSum", 1},
      {"ReduceSumSquare", 1}, {"Relu", 6}, {"Reshape", 5}, {"Selu", 6},
      {"Shape", 1}, {"Sigmoid", 6}, {"Sin", 7}, {"Size", 1}, {"Slice", 1},
      {"Softmax", 1}, {"Softplus", 1}, {"Softsign", 1}, {"SpaceToDepth", 1},
      {"Split", 2}, {"Sqrt", 6}, {"Squeeze", 1}, {"Sub", 7}, {"Sum", 6},
      {"Tan", 7}, {"Tanh", 6}, {"Tile", 6}, {"TopK", 1}, {"Transpose", 1},
      {"Unsqueeze", 1}, {"Upsample", 7}, {"Xor", 7},
  });
  return *versions;
}

}  // namespace

absl::Status CheckOldOpset(const std::string& op_type, int64_t opset) {
  if (opset >= kMinOnnxOpset) return absl::OkStatus();
  const auto found = VersionAtOpset7().find(op_type);
  if (found == VersionAtOpset7().end()) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s is not an op of default-domain opset %d (the model's); opset 7 "
        "does not define it either",
        op_type, opset));
  }
  if (found->second > opset) {
    return absl::UnimplementedError(absl::StrFormat(
        "at the model's opset %d, %s means its version before %s-%d; "
        "scopeflow converts %s-%d and later only (models of opsets %d to %d "
        "convert the ops unchanged since)",
        opset, op_type, op_type, found->second, op_type, found->second,
        kOldestOnnxOpset, kMinOnnxOpset - 1));
  }
  return absl::OkStatus();
}

}  // namespace onnx_import
}  // namespace scopeflow
