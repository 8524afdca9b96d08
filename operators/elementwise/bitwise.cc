// Bitwise ops on integer tensors (int8 to int64, uint8 to uint64):
// bitwise_not of one input "X", and bitwise_and, bitwise_or, bitwise_xor and
// bit_shift of inputs "X" and "Y" of one dtype with numpy-style broadcasting
// (as ONNX BitwiseNot, BitwiseAnd, BitwiseOr, BitwiseXor and BitShift);
// output "Out" has the inputs' dtype. bit_shift (unsigned dtypes only, as
// ONNX's) shifts X by Y bits, attribute "direction" "LEFT" or "RIGHT"; a
// shift by the width or more gives 0 (undefined in C++, unspecified in
// ONNX, 0 in numpy). Integer results carry no gradient.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "framework/op_spec.h"
#include "operators/common.h"
#include "operators/elementwise/broadcast.h"
#include "platform/parallel.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr DataType kBitwiseDtypes[] = {kInt8,  kInt16,  kInt32,  kInt64,
                                       kUInt8, kUInt16, kUInt32, kUInt64};
constexpr DataType kShiftDtypes[] = {kUInt8, kUInt16, kUInt32, kUInt64};
// The C++ types of kShiftDtypes.
using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;

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
    if (b >= std::numeric_limits<T>::digits) return T(0);
    // In unsigned int at least: uint8 and uint16 promote to int, where a
    // left shift into the sign bit is undefined.
    using Wide = std::common_type_t<T, unsigned>;
    const Wide wide = static_cast<Wide>(a);
    return static_cast<T>(kLeft ? wide << b : wide >> b);
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
  SF_RETURN_IF_ERROR(CheckDtypeIn(context, "X", kShiftDtypes));
  SF_RETURN_IF_ERROR(CheckSameDtype(context, "X", "Y"));
  return elementwise::InferBroadcast(context, {"X", "Y"},
                                     context.Input("X").dtype);
}

template <typename T, typename Op>
absl::Status BinaryKernel(KernelContext& context) {
  elementwise::BroadcastBinary<T, T, Op>(context.Input("X"), context.Input("Y"),
                                         context.Output("Out"));
  return absl::OkStatus();
}

template <typename T>
absl::Status BitShiftKernel(KernelContext& context) {
  if (context.attrs().Get<std::string>("direction") == "LEFT") {
    return BinaryKernel<T, Shift<true>>(context);
  }
  return BinaryKernel<T, Shift<false>>(context);
}

}  // namespace

SF_REGISTER_OP(bitwise_not)
    .Input("X")
    .Output("Out")
    .Infer(InferBitwiseNot)
    .Kernels(DeviceType::kCPU, IntegerTypes(), [](auto t) {
      return &BitwiseNotKernel<typename decltype(t)::type>;
    });

#define SF_REGISTER_BITWISE_BINARY(name, Op)                     \
  SF_REGISTER_OP(name)                                           \
      .Input("X")                                                \
      .Input("Y")                                                \
      .Output("Out")                                             \
      .Infer(InferBitwiseBinary)                                 \
      .Kernels(DeviceType::kCPU, IntegerTypes(), [](auto t) {    \
        return &BinaryKernel<typename decltype(t)::type, Op>;    \
      })

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
    .Kernels(DeviceType::kCPU, UnsignedTypes(), [](auto t) {
      return &BitShiftKernel<typename decltype(t)::type>;
    });

}  // namespace scopeflow
