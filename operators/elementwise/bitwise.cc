// Bitwise ops on integer tensors (int8, uint8, int32, int64): bitwise_not
// of one input "X", and bitwise_and, bitwise_or, bitwise_xor and bit_shift
// of inputs "X" and "Y" of one dtype with numpy-style broadcasting (as ONNX
// BitwiseNot, BitwiseAnd, BitwiseOr, BitwiseXor and BitShift); output "Out"
// has the inputs' dtype. bit_shift (unsigned uint8 only, as ONNX's unsigned
// types) shifts X by Y bits, attribute "direction" "LEFT" or "RIGHT"; a
// shift by the width or more gives 0. Integer results carry no gradient.
#include <cstdint>
#include <string>
#include <type_traits>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kBitwiseDtypes[] = {kInt8, kUInt8, kInt32, kInt64};

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

template <bool kLeft>
struct Shift {
  template <typename T>
  T operator()(T a, T b) const {
    static_assert(std::is_unsigned_v<T>);
    if (b >= sizeof(T) * 8) return T(0);
    return static_cast<T>(kLeft ? a << b : a >> b);
  }
};

absl::Status InferBitwiseNot(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kBitwiseDtypes));
  return SameAsInput()(context);
}

template <typename T>
absl::Status BitwiseNotKernel(KernelContext& context) {
  const Tensor& x = context.Input("X");
  const T* in = x.data<T>();
  T* out = context.Output("Out")->data<T>();
  ParallelFor(x.numel(), kElementsWorthAThread,
              [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) {
                  out[i] = static_cast<T>(~in[i]);
                }
              });
  return absl::OkStatus();
}

absl::Status InferBitwiseBinary(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kBitwiseDtypes));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::InferBroadcast(context, {"X", "Y"},
                                     context.Input("X").dtype);
}

absl::Status InferBitShift(InferContext& context) {
  SF_RETURN_IF_ERROR(CheckDtype(context, "X", kUInt8));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::InferBroadcast(context, {"X", "Y"}, kUInt8);
}

template <typename T, typename Op>
absl::Status BinaryKernel(KernelContext& context) {
  elementwise::BroadcastBinary<T, T, Op>(context.Input("X"), context.Input("Y"),
                                         context.Output("Out"));
  return absl::OkStatus();
}

absl::Status BitShiftKernel(KernelContext& context) {
  if (context.attrs().Get<std::string>("direction") == "LEFT") {
    return BinaryKernel<uint8_t, Shift<true>>(context);
  }
  return BinaryKernel<uint8_t, Shift<false>>(context);
}

}  // namespace

SF_REGISTER_OP(bitwise_not)
    .Input("X")
    .Output("Out")
    .Infer(InferBitwiseNot)
    .Kernel(DeviceType::kCPU, kInt8, &BitwiseNotKernel<int8_t>)
    .Kernel(DeviceType::kCPU, kUInt8, &BitwiseNotKernel<uint8_t>)
    .Kernel(DeviceType::kCPU, kInt32, &BitwiseNotKernel<int32_t>)
    .Kernel(DeviceType::kCPU, kInt64, &BitwiseNotKernel<int64_t>);

#define SF_REGISTER_BITWISE_BINARY(type, Op)                        \
  SF_REGISTER_OP(type)                                              \
      .Input("X")                                                   \
      .Input("Y")                                                   \
      .Output("Out")                                                \
      .Infer(InferBitwiseBinary)                                    \
      .Kernel(DeviceType::kCPU, kInt8, &BinaryKernel<int8_t, Op>)   \
      .Kernel(DeviceType::kCPU, kUInt8, &BinaryKernel<uint8_t, Op>) \
      .Kernel(DeviceType::kCPU, kInt32, &BinaryKernel<int32_t, Op>) \
      .Kernel(DeviceType::kCPU, kInt64, &BinaryKernel<int64_t, Op>)

SF_REGISTER_BITWISE_BINARY(bitwise_and, BitAnd);
SF_REGISTER_BITWISE_BINARY(bitwise_or, BitOr);
SF_REGISTER_BITWISE_BINARY(bitwise_xor, BitXor);

SF_REGISTER_OP(bit_shift)
    .Input("X")
    .Input("Y")
    .Output("Out")
    .Attr("direction", AttrType::kString, AttrValue(std::string("LEFT")),
          OneOf({"LEFT", "RIGHT"}))
    .Infer(InferBitShift)
    .Kernel(DeviceType::kCPU, kUInt8, &BitShiftKernel);

}  // namespace scopeflow
