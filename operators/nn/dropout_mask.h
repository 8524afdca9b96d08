// What the dropout kernels of either device share: the engine that draws
// the mask (on the host, so that a seed draws the same mask on the CPU and
// on a GPU) and the factor kept elements are multiplied by.
#ifndef SCOPEFLOW_OPERATORS_NN_DROPOUT_MASK_H_
#define SCOPEFLOW_OPERATORS_NN_DROPOUT_MASK_H_

#include <cstdint>
#include <random>
#include <string>

#include "framework/attribute.h"

namespace scopeflow {
namespace nn {

// The engine that draws the mask: seeded by attribute "seed" alone (`step`
// null, no Seed input), or, with a Seed input, by both through
// std::seed_seq, so that each value of Seed (a step counter the training
// loop keeps) draws a new mask while the same pair draws the same mask
// again. `step` points to Seed's value, read on the host.
std::mt19937 MaskEngine(const Attributes& attrs, const int64_t* step);

// The factor kept elements are multiplied by, in the mode the attributes
// say.
template <typename T>
T KeptScale(const Attributes& attrs) {
  const float p = attrs.Get<float>("dropout_prob");
  const bool upscale =
      attrs.Get<std::string>("dropout_implementation") == "upscale_in_train";
  if (attrs.Get<bool>("is_test")) {
    return upscale ? T{1} : static_cast<T>(1.0 - p);
  }
  return upscale ? static_cast<T>(1.0 / (1.0 - p)) : T{1};
}

}  // namespace nn
}  // namespace scopeflow

#endif  // SCOPEFLOW_OPERATORS_NN_DROPOUT_MASK_H_
