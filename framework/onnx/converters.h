// The node converters of the ONNX importer, one table entry per ONNX op
// type, grouped by family (one file each). Internal to framework/onnx.
#ifndef SCOPEFLOW_FRAMEWORK_ONNX_CONVERTERS_H_
#define SCOPEFLOW_FRAMEWORK_ONNX_CONVERTERS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/onnx/import_context.h"

namespace scopeflow {
namespace onnx_import {

// Converts one node: emits its ops through the context, or returns why it
// cannot (Unimplemented: scopeflow lacks something; other codes: the node
// is malformed).
using ConvertFn = absl::Status (*)(NodeContext&);
using ConverterMap = absl::flat_hash_map<std::string, ConvertFn>;

// Each family adds its converters.
void AddElementwiseConverters(ConverterMap& map);
void AddNnConverters(ConverterMap& map);
void AddShapeConverters(ConverterMap& map);
void AddReduceConverters(ConverterMap& map);
void AddResizeConverters(ConverterMap& map);
void AddConvTransposeConverters(ConverterMap& map);
void AddRecurrentConverters(ConverterMap& map);
void AddMoreElementwiseConverters(ConverterMap& map);
void AddControlFlowConverters(ConverterMap& map);
void AddSequenceConverters(ConverterMap& map);
void AddIndexingConverters(ConverterMap& map);
void AddTensorOpConverters(ConverterMap& map);
void AddGroupNormConverters(ConverterMap& map);
void AddDetectionConverters(ConverterMap& map);
void AddQuantizationConverters(ConverterMap& map);
void AddLossConverters(ConverterMap& map);
void AddRmsNormConverters(ConverterMap& map);
void AddAttentionConverters(ConverterMap& map);
void AddComposedConverters(ConverterMap& map);
void AddCausalConvConverters(ConverterMap& map);
void AddSpatialConverters(ConverterMap& map);
void AddSignalConverters(ConverterMap& map);
void AddRotaryConverters(ConverterMap& map);
void AddUniqueConverters(ConverterMap& map);
void AddTfIdfConverters(ConverterMap& map);
void AddDetScatterConverters(ConverterMap& map);
void AddOptionalConverters(ConverterMap& map);

// All of them; built once.
const ConverterMap& Converters();

// Why an ONNX op type without a converter cannot be imported: the
// scopeflow op it would need.
std::string NoConverterReason(const std::string& op_type);

// Shared by the families.

// OK unless the model's opset predates the node's op (`since`): a node the
// opset does not define is malformed (InvalidArgument).
absl::Status RequireOpset(const NodeContext& context, int64_t since);

// Padding of a 2-D window (conv2d) from ONNX's auto_pad and pads
// attributes, as scopeflow's "paddings": [top, bottom, left, right].
// `input` is the rank-4 NCHW input; `kernel`, `strides` and `dilations`
// are [h, w]. SAME_UPPER and SAME_LOWER need the input's spatial size.
absl::StatusOr<std::vector<int32_t>> WindowPaddings(
    NodeContext& context, const VarInfo& input,
    const std::array<int64_t, 2>& kernel, const std::array<int64_t, 2>& strides,
    const std::array<int64_t, 2>& dilations);

// The same for windows over any number of spatial axes (one value per axis
// in `kernel`, `strides` and `dilations`; `input` is [N, C, spatial...]):
// scopeflow's [before_0, after_0, before_1, after_1, ...].
absl::StatusOr<std::vector<int32_t>> SpatialPaddings(
    NodeContext& context, const VarInfo& input,
    const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
    const std::vector<int64_t>& dilations);

}  // namespace onnx_import
}  // namespace scopeflow

#endif  // SCOPEFLOW_FRAMEWORK_ONNX_CONVERTERS_H_
