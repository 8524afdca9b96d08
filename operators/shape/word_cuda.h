// Unsigned words of 1 to 16 bytes, as which the shape kernels move
// elements: the copies never look at values, so one kernel serves every
// dtype of a size. For .cu files only.
#ifndef SCOPEFLOW_OPERATORS_SHAPE_WORD_CUDA_H_
#define SCOPEFLOW_OPERATORS_SHAPE_WORD_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace scopeflow {
namespace cuda {

template <int kBytes>
struct Word;
template <>
struct Word<1> {
  using Type = uint8_t;
};
template <>
struct Word<2> {
  using Type = uint16_t;
};
template <>
struct Word<4> {
  using Type = uint32_t;
};
template <>
struct Word<8> {
  using Type = uint2;
};
template <>
struct Word<16> {
  using Type = uint4;
};

}  // namespace cuda
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_SHAPE_WORD_CUDA_H_
