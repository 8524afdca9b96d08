#include "operators/nn/dropout_mask.h"

namespace scopeflow {
namespace nn {

std::mt19937 MaskEngine(const Attributes& attrs, const int64_t* step) {
  const auto attr = static_cast<uint32_t>(attrs.Get<int32_t>("seed"));
  if (step == nullptr) return std::mt19937(attr);
  const auto bits = static_cast<uint64_t>(*step);
  std::seed_seq seq{attr, static_cast<uint32_t>(bits),
                    static_cast<uint32_t>(bits >> 32)};
  return std::mt19937(seq);
}

}  // namespace nn
}  // namespace scopeflow
