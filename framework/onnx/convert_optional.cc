// Converters of ONNX's optional ops for the values scopeflow has. An ONNX
// optional is either empty or holds a value; scopeflow has no optional
// type, so the import decides presence statically: a tensor value (a graph
// input, an initializer, a node's output) is present, and an input left
// out of the node (absent, or named "") is empty. Hence
//   Optional(x)            -> x itself (an assign);
//   OptionalHasElement(x)  -> the constant true for a tensor, false for a
//                             left-out input;
//   OptionalGetElement(x)  -> x itself for a tensor.
// A graph input of optional tensor type imports as a required tensor input
// (framework/onnx/onnx_importer.cc): every run feeds it, so it is present.
// An empty Optional (no input), whose emptiness would have to reach run
// time (through an If's branches, say), is Unimplemented.
#include <string>

#include "absl/strings/str_format.h"
#include "framework/onnx/converters.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace onnx_import {
namespace {

absl::Status ConvertOptional(NodeContext& context) {
  if (!context.HasInput(0)) {
    return Unsupported(
        "an empty optional (Optional without an input) has no scopeflow "
        "equivalent: scopeflow decides an optional's presence at import, "
        "and only a tensor value is present");
  }
  // The element type serves an empty Optional only; a given input has its
  // own.
  context.IgnoreAttr("type");
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder("assign").In("X", x).Out("Out", context.Output(0)));
}

// Opset 18 takes a tensor as well as an optional (which scopeflow holds as
// the tensor it contains).
absl::Status ConvertOptionalHasElement(NodeContext& context) {
  const bool present = context.HasInput(0);
  if (present) SF_RETURN_IF_ERROR(context.Input(0).status());
  Tensor value;
  SF_RETURN_IF_ERROR(value.Allocate(CPUPlace(), kBool, Dims{}));
  value.data<bool>()[0] = present;
  context.SetConstantOutput(0, std::move(value));
  return absl::OkStatus();
}

absl::Status ConvertOptionalGetElement(NodeContext& context) {
  SF_CHECK(context.HasInput(0),
           "OptionalGetElement of an empty optional (input 0 left out): it "
           "has no element to get");
  SF_ASSIGN_OR_RETURN(const std::string x, context.Input(0));
  return context.Emit(
      OpBuilder("assign").In("X", x).Out("Out", context.Output(0)));
}

}  // namespace

void AddOptionalConverters(ConverterMap& map) {
  map["Optional"] = &ConvertOptional;
  map["OptionalHasElement"] = &ConvertOptionalHasElement;
  map["OptionalGetElement"] = &ConvertOptionalGetElement;
}

}  // namespace onnx_import
}  // namespace scopeflow
