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
          {"Acos", {"acos"}},
          {"Acosh", {"acosh"}},
          {"Add", {"add"}},
          {"And", {"logical_and"}},
          {"ArgMax", {"argmax"}},
          {"ArgMin", {"argmin"}},
          {"Asin", {"asin"}},
          {"Asinh", {"asinh"}},
          {"Atan", {"atan"}},
          {"Atanh", {"atanh"}},
          {"Attention", {"attention", "matmul", "softmax"}},
          {"AveragePool", {"pool1d", "pool2d", "pool3d"}},
          {"BatchNormalization", {"batch_norm"}},
          {"BitCast", {"bit_cast"}},
          {"BitShift", {"bit_shift"}},
          {"BitwiseAnd", {"bitwise_and"}},
          {"BitwiseNot", {"bitwise_not"}},
          {"BitwiseOr", {"bitwise_or"}},
          {"BitwiseXor", {"bitwise_xor"}},
          {"BlackmanWindow", {"window"}},
          {"Cast", {"cast"}},
          {"CastLike", {"cast"}},
          {"CausalConvWithState", {"concat", "conv2d", "silu", "slice"}},
          {"Ceil", {"ceil"}},
          {"Celu", {"elu", "scale"}},
          {"Clip", {"clip"}},
          {"Compress", {"gather", "non_zero", "reshape"}},
          {"Concat", {"concat"}},
          {"ConcatFromSequence", {"assign", "reshape"}},
          {"Constant", {}},
          {"ConstantOfShape", {"expand"}},
          {"Conv", {"conv2d"}},
          {"ConvInteger", {"conv_integer"}},
          {"ConvTranspose", {"conv2d_transpose", "conv3d_transpose"}},
          {"Cos", {"cos"}},
          {"Cosh", {"cosh"}},
          {"CumProd", {"cumprod"}},
          {"CumSum", {"cumsum"}},
          {"DepthToSpace", {"depth_to_space"}},
          {"DequantizeLinear", {"dequantize_linear"}},
          {"Det", {"det"}},
          {"Div", {"div"}},
          {"Dropout", {"dropout"}},
          {"DynamicQuantizeLinear", {"dynamic_quantize_linear"}},
          {"Einsum", {"einsum"}},
          {"Elu", {"elu"}},
          {"Equal", {"equal"}},
          {"Erf", {"erf"}},
          {"Exp", {"exp"}},
          {"Expand", {"expand"}},
          {"EyeLike", {}},
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
          {"HammingWindow", {"window"}},
          {"HannWindow", {"window"}},
          {"HardSigmoid", {"hard_sigmoid"}},
          {"HardSwish", {"hard_swish"}},
          {"Hardmax", {"argmax", "one_hot"}},
          {"Identity", {"assign"}},
          {"If", {"conditional_block"}},
          {"InstanceNormalization", {"instance_norm"}},
          {"IsInf", {"equal", "logical_or"}},
          {"IsNaN", {"equal", "logical_not"}},
          {"LRN", {"pool2d", "pow"}},
          {"LSTM", {"recurrent"}},
          {"LayerNormalization", {"layer_norm"}},
          {"LeakyRelu", {"leaky_relu"}},
          {"Less", {"less"}},
          {"LessOrEqual", {"less_equal"}},
          {"Log", {"log"}},
          {"LogSoftmax", {"log_softmax"}},
          {"Loop", {"while"}},
          {"LpNormalization", {"div", "reduce_l1", "reduce_l2"}},
          {"LpPool", {"pool1d", "pool2d", "pool3d", "pow"}},
          {"MatMul", {"matmul"}},
          {"MatMulInteger", {"matmul_integer"}},
          {"Max", {"max"}},
          {"MaxPool", {"pool1d", "pool2d", "pool3d"}},
          {"Mean", {"add", "scale"}},
          {"MeanVarianceNormalization",
           {"div", "mul", "reduce_mean", "scale", "sqrt", "sub"}},
          {"Min", {"min"}},
          {"Mish", {"mish"}},
          {"Mod", {"mod"}},
          {"Mul", {"mul"}},
          {"Neg", {"neg"}},
          {"NegativeLogLikelihoodLoss", {"nll_loss"}},
          {"NonMaxSuppression", {"non_max_suppression"}},
          {"NonZero", {"non_zero"}},
          {"Not", {"logical_not"}},
          {"OneHot", {"one_hot"}},
          {"Optional", {"assign"}},
          {"OptionalGetElement", {"assign"}},
          {"OptionalHasElement", {}},
          {"Or", {"logical_or"}},
          {"PRelu", {"prelu"}},
          {"Pad", {"pad"}},
          {"Pow", {"pow"}},
          {"QLinearConv", {"qlinear_conv"}},
          {"QLinearMatMul", {"qlinear_matmul"}},
          {"QuantizeLinear", {"quantize_linear"}},
          {"RMSNormalization", {"div", "mul", "reduce_mean", "scale", "sqrt"}},
          {"RNN", {"recurrent"}},
          {"Range", {"range"}},
          {"Reciprocal", {"reciprocal"}},
          {"ReduceL1", {"reduce_l1"}},
          {"ReduceL2", {"reduce_l2"}},
          {"ReduceLogSum", {"log", "reduce_sum"}},
          {"ReduceLogSumExp", {"reduce_log_sum_exp"}},
          {"ReduceMax", {"reduce_max"}},
          {"ReduceMean", {"reduce_mean"}},
          {"ReduceMin", {"reduce_min"}},
          {"ReduceProd", {"reduce_prod"}},
          {"ReduceSum", {"reduce_sum"}},
          {"ReduceSumSquare", {"mul", "reduce_sum"}},
          {"Relu", {"relu"}},
          {"Reshape", {"reshape"}},
          {"Resize", {"resize"}},
          {"ReverseSequence", {"reverse_sequence"}},
          {"RoiAlign", {"roi_align"}},
          {"Round", {"round"}},
          {"Scan", {"recurrent"}},
          {"Scatter", {"scatter_elements"}},
          {"ScatterElements", {"scatter_elements"}},
          {"ScatterND", {"scatter_nd"}},
          {"Selu", {"selu"}},
          {"SequenceEmpty", {}},
          {"Shape", {"shape"}},
          {"Shrink", {"greater", "less", "scale", "where"}},
          {"Sigmoid", {"sigmoid"}},
          {"Sign", {"sign"}},
          {"Sin", {"sin"}},
          {"Sinh", {"sinh"}},
          {"Size", {"size"}},
          {"Slice", {"slice"}},
          {"Softmax", {"softmax"}},
          {"SoftmaxCrossEntropyLoss", {"log_softmax", "nll_loss"}},
          {"Softplus", {"softplus"}},
          {"Softsign", {"softsign"}},
          {"SpaceToDepth", {"space_to_depth"}},
          {"Split", {"split"}},
          {"Sqrt", {"sqrt"}},
          {"Squeeze", {"squeeze"}},
          {"Sub", {"sub"}},
          {"Sum", {"add"}},
          {"Swish", {"mul", "scale", "sigmoid", "silu"}},
          {"Tan", {"tan"}},
          {"Tanh", {"tanh"}},
          {"TensorScatter", {"tensor_scatter"}},
          {"ThresholdedRelu", {"greater", "where"}},
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
