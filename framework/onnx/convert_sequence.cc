// Converters of the ONNX sequence ops that torch's scripted loops export for
// a list appended to in the loop:
//   seq = SequenceEmpty(); Loop(..., seq) { SequenceInsert(seq_in, t) };
//   ConcatFromSequence(loop's seq, axis, new_axis)
// The Loop converter makes the appended tensors a scan output
// (framework/onnx/convert_control_flow.cc); the sequence values are tracked
// by the import (SequenceValue), never held by a variable. Other uses of
// sequences are Unimplemented.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "framework/onnx/onnx_tensor.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::Status ConvertSequenceEmpty(NodeContext& c) {
  SF_ASSIGN_OR_RETURN(const int64_t elem_type,
                      c.IntAttr("dtype", onnx::TensorProto::FLOAT));
  SF_ASSIGN_OR_RETURN(const DataType dtype,
                      DataTypeFromOnnx(static_cast<int32_t>(elem_type)));
  c.SetSequenceOutput(0, SequenceValue{dtype, ""});
  return absl::OkStatus();
}

// The stacked elements [T, e_0, ..., e_{r-1}] joined along `axis`: with
// new_axis, stacked there (axis 0 moved to `axis`); without, concatenated
// (axis 0 moved next to e_axis, then the two merged).
absl::Status ConvertConcatFromSequence(NodeContext& c) {
  const SequenceValue* seq = c.Sequence(c.InputName(0));
  if (seq == nullptr) {
    return Unsupported(absl::StrFormat(
        "input 0 (\"%s\") is no sequence scopeflow tracks (only one a Loop "
        "appends to converts)",
        c.InputName(0)));
  }
  if (seq->stacked.empty()) {
    return Unsupported(absl::StrFormat(
        "input 0 (\"%s\") is an empty sequence: its elements' shape is "
        "unknown",
        c.InputName(0)));
  }
  SF_ASSIGN_OR_RETURN(const int64_t axis, c.IntAttr("axis"));
  SF_ASSIGN_OR_RETURN(const int64_t new_axis, c.IntAttr("new_axis", 0));
  const VarInfo info = c.Info(seq->stacked);
  if (!info.has_dims) {
    return Unsupported("the sequence's elements have an unknown rank");
  }
  const int64_t rank = static_cast<int64_t>(info.dims.size()) - 1;
  const int64_t out_rank = new_axis != 0 ? rank + 1 : rank;
  SF_CHECK(axis >= -out_rank && axis < out_rank,
           "axis = %d is out of range for %d-D %s", axis, out_rank,
           new_axis != 0 ? "stacked elements" : "elements");
  const int32_t a = static_cast<int32_t>(axis < 0 ? axis + out_rank : axis);
  std::vector<int32_t> perm;
  for (int32_t i = 1; i <= rank; ++i) perm.push_back(i);
  perm.insert(perm.begin() + a, 0);
  const bool moved = a != 0;
  const std::string stacked =
      new_axis != 0 ? c.Output(0) : c.Temp("stacked");
  if (moved) {
    SF_RETURN_IF_ERROR(c.Emit(OpBuilder("transpose")
                                  .In("X", seq->stacked)
                                  .Out("Out", stacked)
                                  .Attr("perm", perm)));
  } else {
    SF_RETURN_IF_ERROR(c.Emit(
        OpBuilder("assign").In("X", seq->stacked).Out("Out", stacked)));
  }
  if (new_axis != 0) return absl::OkStatus();
  // [e_0, ..., T, e_a, ...] -> [e_0, ..., T * e_a, ...]: every other
  // dimension must be known (reshape's 0 copies by position).
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = info.dims[1 + i];
    if (i == a) {
      shape.push_back(-1);
      continue;
    }
    if (d < 0) {
      return Unsupported(absl::StrFormat(
          "concatenating the sequence along axis %d needs its elements' "
          "other dimensions, but they are %s",
          a, DimsToString(Dims(info.dims.begin() + 1, info.dims.end()))));
    }
    shape.push_back(d);
  }
  return c.Emit(OpBuilder("reshape")
                    .In("X", stacked)
                    .Out("Out", c.Output(0))
                    .Attr("shape", shape));
}

}  // namespace

void AddSequenceConverters(ConverterMap& map) {
  map["SequenceEmpty"] = ConvertSequenceEmpty;
  map["ConcatFromSequence"] = ConvertConcatFromSequence;
}

}  // namespace onnx_import
}  // namespace scopeflow
