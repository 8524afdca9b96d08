// Bitwise ops on integer tensors, as ONNX BitwiseAnd, BitwiseOr,
// BitwiseXor, BitwiseNot and BitShift: bitwise_and, bitwise_or and
// bitwise_xor of inputs "X" and "Y" of one integer dtype (int8 to int64,
// uint8 to uint64) with numpy-style broadcasting, bitwise_not of one input
// "X", and bit_shift of X by Y bits (unsigned dtypes, as ONNX has it) in
// the direction of attribute "direction", "LEFT" or "RIGHT". Output "Out"
// has X's dtype.
//
// A shift by the type's width or more gives 0 (in C++ it is undefined; in
// ONNX left unspecified; numpy gives 0 as well).
//
// Their values are bit patterns, not quantities: they carry no gradient.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "operators/elementwise/vector_loops.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

struct BitAnd {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};

struct BitOr {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};

struct BitXor {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};

struct BitNot {
  template <typename T>
  T operator()(T a) const {
    return static_cast<T>(~a);
  }
};

struct ShiftLeft {
  template <typename T>
  T operator()(T a, T bits) const {
    if (bits >= std::numeric_limits<T>::digits) return 0;
    // In unsigned int at least: uint8 and uint16 promote to int, where a
    // shift into the sign bit is undefined.
    using Wide = std::common_type_t<T, unsigned>;
    return static_cast<T>(static_cast<Wide>(a) << bits);
  }
};

struct ShiftRight {
  template <typename T>
  T operator()(T a, T bits) const {
    if (bits >= std::numeric_limits<T>::digits) return 0;
    return static_cast<T>(a >> bits);
  }
};

// The unsigned types of bit_shift.
using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;

absl::Status InferBitwise(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  const DataType dtype = context.Input("X").dtype;
  SF_CHECK(dtype == DATA_TYPE_UNSPECIFIED || IsIntegerDataType(dtype),
           "input \"X\" (variable \"%s\") has dtype %s: expected an integer "
           "dtype",
           context.InputName("X"), DataTypeName(dtype));
  return elementwise::InferBroadcast(context, {"X", "Y"}, dtype);
}

absl::Status InferBitNot(InferContext& context) {
  const DataType dtype = context.Input("X").dtype;
  SF_CHECK(dtype == DATA_TYPE_UNSPECIFIED || IsIntegerDataType(dtype),
           "input \"X\" (variable \"%s\") has dtype %s: expected an integer "
           "dtype",
           context.InputName("X"), DataTypeName(dtype));
  return SameAsInput()(context);
}

absl::Status CheckDirection(const AttrValue& value) {
  const std::string& direction = std::get<std::string>(value);
  if (direction == "LEFT" || direction == "RIGHT") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("must be \"LEFT\" or \"RIGHT\"; got \"", direction, "\""));
}

template <typename T, typename Op>
absl::Status BinaryKernel(KernelContext& context) {
  elementwise::BroadcastBinary<T, T, Op>(context.Input("X"), context.Input("Y"),
                                         context.Output("Out"));
  return absl::OkStatus();
}

template <typename T>
absl::Status NotKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  elementwise::MapInto(x.data<T>(), context.Output("Out")->data<T>(), x.numel(),
                       BitNot());
  return absl::OkStatus();
}

template <typename T>
absl::Status ShiftKernel(KernelContext& context) {
  if (context.attrs().Get<std::string>("direction") == "LEFT") {
    return BinaryKernel<T, ShiftLeft>(context);
  }
  return BinaryKernel<T, ShiftRight>(context);
}

}  // namespace

SF_REGISTER_OP(bitwise_and)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBitwise)
    .Kernels(DeviceType::kCPU, IntegerTypes(), [](auto t) {
      return &BinaryKernel<typename decltype(t)::type, BitAnd>;
    });

SF_REGISTER_OP(bitwise_or)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBitwise)
    .Kernels(DeviceType::kCPU, IntegerTypes(), [](auto t) {
      return &BinaryKernel<typename decltype(t)::type, BitOr>;
    });

SF_REGISTER_OP(bitwise_xor)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Infer(InferBitwise)
    .Kernels(DeviceType::kCPU, IntegerTypes(), [](auto t) {
      return &BinaryKernel<typename decltype(t)::type, BitXor>;
    });

SF_REGISTER_OP(bitwise_not)
    .Input("X")
    .Output("Out")
    .Infer(InferBitNot)
    .Kernels(DeviceType::kCPU, IntegerTypes(),
             [](auto t) { return &NotKernel<typename decltype(t)::type>; });

SF_REGISTER_OP(bit_shift)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Attr("direction", AttrType::kString, CheckDirection)
    .Infer(InferBitwise)
    .Kernels(DeviceType::kCPU, UnsignedTypes(),
             [](auto t) { return &ShiftKernel<typename decltype(t)::type>; });

}  // namespace scopeflow
