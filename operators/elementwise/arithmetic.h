// Arithmetic functors shared by the elementwise ops. On integers they wrap
// around (two's complement) where C++ would overflow, so that no input can
// make a kernel's behaviour undefined.
#ifndef SCOPEFLOW_OPERATORS_ELEMENTWISE_ARITHMETIC_H_
#define SCOPEFLOW_OPERATORS_ELEMENTWISE_ARITHMETIC_H_

#include <type_traits>

namespace scopeflow {
namespace elementwise {

// The unsigned type integer T computes in: at least unsigned int, since
// narrower types promote to (signed) int, where uint16 * uint16 overflows.
template <typename T>
using Unsigned = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

struct Add {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Unsigned<T>>(a) +
                            static_cast<Unsigned<T>>(b));
    } else {
      return a + b;
    }
  }
};

struct Sub {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Unsigned<T>>(a) -
                            static_cast<Unsigned<T>>(b));
    } else {
      return a - b;
    }
  }
};

struct Mul {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Unsigned<T>>(a) *
                            static_cast<Unsigned<T>>(b));
    } else {
      return a * b;
    }
  }
};

struct Neg {
  template <typename T>
  T operator()(T a) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Unsigned<T>{0} - static_cast<Unsigned<T>>(a));
    } else {
      return -a;
    }
  }
};

}  // namespace elementwise
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_ELEMENTWISE_ARITHMETIC_H_
