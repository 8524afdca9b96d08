#include "framework/onnx/onnx_op_map.h"

#include <algorithm>

#include "framework/onnx/converters.h"

namespace scopeflow {
namespace onnx_import {

const std::vector<std::pair<std::string, std::vector<std::string>>>&
OnnxImportTable() {
  static const auto* const table =
      new std::vector<std::pair<std::string, std::vector<std::string>>>{
          {"Abs", {"abs"}},
          {"Add", {"add"}},
          {"And", {"logical_and"}},
          {"ArgMax", {"argmax"}},
          {"ArgMin", {"argmin"}},
          {"AveragePool", {"pool1d", "pool2d", "pool3d"}},
          {"BatchNormalization", {"batch_norm"}},
          {"BitShift", {"bit_shift"}},
          {"BitwiseAnd", {"bitwise_and"}},
          {"BitwiseNot", {"bitwise_not"}},
          {"BitwiseOr", {"bitwise_or"}},
          {"BitwiseXor", {"bitwise_xor"}},
          {"Cast", {"cast"}},
          {"Ceil", {"ceil"}},
          {"Clip", {"clip"}},
          {"Concat", {"concat"}},
          {"ConcatFromSequence", {"assign", "reshape"}},
          {"Constant", {}},
          {"ConstantOfShape", {"expand"}},
          {"Conv", {"conv2d"}},
          {"ConvInteger", {"conv_integer"}},
          {"ConvTranspose", {"conv2d_transpose", "conv3d_transpose"}},
          {"Cos", {"cos"}},
          {"CumSum", {"cumsum"}},
          {"DepthToSpace", {"depth_to_space"}},
          {"DequantizeLinear", {"dequantize_linear"}},
          {"Div", {"div"}},
          {"Dropout", {"dropout"}},
          {"DynamicQuantizeLinear", {"dynamic_quantize_linear"}},
          {"Einsum", {"einsum"}},
          {"Elu", {"elu"}},
          {"Equal", {"equal"}},
          {"Erf", {"erf"}},
          {"Exp", {"exp"}},
          {"Expand", {"expand"}},
          {"Flatten", {"flatten"}},
          {"Floor", {"floor"}},
          {"GRU", {"recurrent"}},
          {"Gather", {"gather"}},
          {"GatherElements", {"gather_elements"}},
          {"GatherND", {"gather_nd"}},
          {"Gelu", {"gelu"}},
          {"Gemm", {"add", "matmul", "scale"}},
          {"GlobalAveragePool", {"pool1d", "pool2d", "pool3d"}},
          {"GlobalMaxPool", {"pool1d", "pool2d", "pool3d"}},
          {"Greater", {"greater"}},
          {"GreaterOrEqual", {"greater_equal"}},
          {"GroupNormalization", {"group_norm"}},
          {"HardSigmoid", {"hard_sigmoid"}},
          {"HardSwish", {"hard_swish"}},
          {"Identity", {"assign"}},
          {"If", {"conditional_block"}},
          {"InstanceNormalization", {"instance_norm"}},
          {"LSTM", {"recurrent"}},
          {"LayerNormalization", {"layer_norm"}},
          {"LeakyRelu", {"leaky_relu"}},
          {"Less", {"less"}},
          {"LessOrEqual", {"less_equal"}},
          {"Log", {"log"}},
          {"LogSoftmax", {"log_softmax"}},
          {"Loop", {"while"}},
          {"MatMul", {"matmul"}},
          {"MatMulInteger", {"matmul_integer"}},
          {"Max", {"max"}},
          {"MaxPool", {"pool1d", "pool2d", "pool3d"}},
          {"Mean", {"add", "scale"}},
          {"Min", {"min"}},
          {"Mish", {"mish"}},
          {"Mod", {"mod"}},
          {"Mul", {"mul"}},
          {"Neg", {"neg"}},
          {"NonMaxSuppression", {"non_max_suppression"}},
          {"NonZero", {"non_zero"}},
          {"Not", {"logical_not"}},
          {"OneHot", {"one_hot"}},
          {"Or", {"logical_or"}},
          {"PRelu", {"prelu"}},
          {"Pad", {"pad"}},
          {"Pow", {"pow"}},
          {"QLinearConv", {"qlinear_conv"}},
          {"QLinearMatMul", {"qlinear_matmul"}},
          {"QuantizeLinear", {"quantize_linear"}},
          {"RNN", {"recurrent"}},
          {"Range", {"range"}},
          {"Reciprocal", {"reciprocal"}},
          {"ReduceL1", {"reduce_l1"}},
          {"ReduceL2", {"reduce_l2"}},
          {"ReduceLogSumExp", {"reduce_log_sum_exp"}},
          {"ReduceMax", {"reduce_max"}},
          {"ReduceMean", {"reduce_mean"}},
          {"ReduceMin", {"reduce_min"}},
          {"ReduceProd", {"reduce_prod"}},
          {"ReduceSum", {"reduce_sum"}},
          {"Relu", {"relu"}},
          {"Reshape", {"reshape"}},
          {"Resize", {"resize"}},
          {"RoiAlign", {"roi_align"}},
          {"Round", {"round"}},
          {"Scan", {"recurrent"}},
          {"Scatter", {"scatter_elements"}},
          {"ScatterElements", {"scatter_elements"}},
          {"ScatterND", {"scatter_nd"}},
          {"Selu", {"selu"}},
          {"SequenceEmpty", {}},
          {"Shape", {"shape"}},
          {"Sigmoid", {"sigmoid"}},
          {"Sign", {"sign"}},
          {"Sin", {"sin"}},
          {"Slice", {"slice"}},
          {"Softmax", {"softmax"}},
          {"Softplus", {"softplus"}},
          {"SpaceToDepth", {"space_to_depth"}},
          {"Split", {"split"}},
          {"Sqrt", {"sqrt"}},
          {"Squeeze", {"squeeze"}},
          {"Sub", {"sub"}},
          {"Sum", {"add"}},
          {"Tanh", {"tanh"}},
          {"Tile", {"tile"}},
          {"TopK", {"top_k"}},
          {"Transpose", {"transpose"}},
          {"Trilu", {"trilu"}},
          {"Unsqueeze", {"unsqueeze"}},
          {"Upsample", {"resize"}},
          {"Where", {"where"}},
          {"Xor", {"logical_xor"}},
      };
  return *table;
}

std::vector<std::string> ConvertibleOnnxOps() {
  std::vector<std::string> types;
  for (const auto& [onnx, ops] : OnnxImportTable()) types.push_back(onnx);
  return types;
}

std::vector<std::string> OnnxOpsWithConverter() {
  std::vector<std::string> types;
  for (const auto& [onnx, convert] : Converters()) types.push_back(onnx);
  std::sort(types.begin(), types.end());
  return types;
}

std::vector<std::string> OnnxOpsImportedAs(absl::string_view type) {
  std::vector<std::string> onnx_types;
  for (const auto& [onnx, ops] : OnnxImportTable()) {
    if (std::find(ops.begin(), ops.end(), type) != ops.end()) {
      onnx_types.push_back(onnx);
    }
  }
  return onnx_types;
}

}  // namespace onnx_import
}  // namespace scopeflow
