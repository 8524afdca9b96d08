// cast's conversion of one value, shared by its CPU kernel (cast.cc) and
// its CUDA kernel (unary_cuda.cu): plain C++ that nvcc compiles for the
// device too.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_CONVERT_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_CONVERT_H_

#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define SF_CONVERT_HOST_DEVICE __host__ __device__
#else
#define SF_CONVERT_HOST_DEVICE
#endif

namespace scopeflow {
namespace elementwise {

// `v` as To: float to integer truncates toward zero and saturates at the
// integer type's limits (NaN gives 0); integer to narrower integer wraps
// around; anything to bool is "not zero"; float16 converts through float32.
// HalfTraits names the float16 type (Type) and converts it from and to
// float32 (static ToFloat and FromFloat), on the host or on the device.
template <typename To, typename From, typename HalfTraits>
SF_CONVERT_HOST_DEVICE To ConvertValue(From v) {
  using Half = typename HalfTraits::Type;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, Half>) {
    return ConvertValue<To, float, HalfTraits>(HalfTraits::ToFloat(v));
  } else if constexpr (std::is_same_v<To, Half>) {
    return HalfTraits::FromFloat(ConvertValue<float, From, HalfTraits>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    // Both limits are exact in double: 0 or -2^k, and 2^k.
    constexpr double kLowest =
        static_cast<double>(std::numeric_limits<To>::min());
    constexpr double kBeyond =
        static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2;
    if (v != v) return To{0};
    if (v <= kLowest) return std::numeric_limits<To>::min();
    if (v >= kBeyond) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace elementwise
}  // namespace scopeflow

#undef SF_CONVERT_HOST_DEVICE

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_CONVERT_H_
