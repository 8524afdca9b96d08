// bit_cast: ONNX's BitCast (26). Out holds X's bytes read as attribute
// "out_dtype" (a DataType number), whose elements have X's size (any
// dtype: 1, 2, 4 or 8 bytes). To bool only from bool, as other bytes than 0
// and 1 are no bool values. Out has X's shape.
// No gradient: the bits of a float are no differentiable function of it.
#include <cstdint>
#include <cstring>
#include <variant>

#include "absl/strings/str_format.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

absl::Status CheckOutDtype(const AttrValue& value) {
  const DataType dtype = static_cast<DataType>(std::get<int32_t>(value));
  SF_CHECK(IsValidDataType(dtype), "must be a dtype number; got %d",
           static_cast<int>(dtype));
  return absl::OkStatus();
}

absl::Status InferBitCast(InferContext& context) {
  VarInfo info = context.Input("X");
  const DataType to =
      static_cast<DataType>(context.attrs().Get<int32_t>("out_dtype"));
  SF_CHECK(SizeOf(to) == SizeOf(info.dtype),
           "attribute \"out_dtype\" is %s, of %d byte(s) an element, but "
           "input \"X\" (variable \"%s\") has dtype %s, of %d: expected the "
           "same size",
           DataTypeName(to), SizeOf(to), context.InputName("X"),
           DataTypeName(info.dtype), SizeOf(info.dtype));
  SF_CHECK(to != kBool || info.dtype == kBool,
           "attribute \"out_dtype\" is bool, but input \"X\" (variable \"%s\") "
           "has dtype %s, whose bytes need not be 0 or 1: expected bool",
           context.InputName("X"), DataTypeName(info.dtype));
  info.dtype = to;
  context.SetOutput("Out", info);
  return absl::OkStatus();
}

absl::Status BitCastKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  if (x.numel() == 0) return absl::OkStatus();
  std::memcpy(context.Output("Out")->raw_data(), x.raw_data(),
              x.numel() * SizeOf(x.dtype()));
  return absl::OkStatus();
}

}  // namespace

SF_REGISTER_OP(bit_cast)
    .Input("X")
    .Output("Out")
    .Attr("out_dtype", AttrType::kInt, CheckOutDtype)
    .Infer(InferBitCast)
    .Kernels(DeviceType::kCPU, AllTypes(),
             [](auto) { return &BitCastKernel; });

}  // namespace scopeflow
