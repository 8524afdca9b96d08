// IntegerMatmul through oneDNN against IntegerMatmulLoop on random
// operands of every dtype pair, zero points and batch layouts: the two
// paths must agree exactly (both are exact int32 arithmetic).
#include "operators/quantization/integer_matmul.h"

#include <cstdint>
#include <random>
#include <vector>

#include "framework/op_test_util.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

template <typename T>
Tensor Random(Dims dims, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(),
                                          std::numeric_limits<T>::max());
  std::vector<T> values(NumElements(dims));
  for (T& v : values) v = static_cast<T>(dist(engine));
  return MakeTensor<T>(dims, values);
}

template <typename A, typename B>
void ExpectPathsAgree(const Dims& a_dims, const Dims& b_dims, int32_t a_zero,
                      int32_t b_zero) {
  const Tensor a = Random<A>(a_dims, 1);
  const Tensor b = Random<B>(b_dims, 2);
  absl::StatusOr<Dims> out = IntegerMatmulDims(a_dims, b_dims, "A", "B");
  ASSERT_TRUE(out.ok()) << out.status();
  const IntegerMatmulSizes sizes = IntegerMatmulSizesOf(a_dims, b_dims, *out);
  const std::vector<int32_t> a_zeros(sizes.m, a_zero), b_zeros(sizes.n, b_zero);
  std::vector<int32_t> fast(NumElements(*out)), loop(NumElements(*out));
  IntegerMatmul(a, b, a_zeros, b_zeros, sizes, fast.data());
  IntegerMatmulLoop(a, b, a_zeros, b_zeros, sizes, loop.data());
  EXPECT_EQ(fast, loop) << DimsToString(a_dims) << " x " << DimsToString(b_dims)
                        << " zero points " << a_zero << ", " << b_zero;
}

TEST(IntegerMatmulTest, OneDnnAgreesWithTheLoops) {
  ExpectPathsAgree<uint8_t, int8_t>({37, 70}, {70, 19}, 128, 0);
  ExpectPathsAgree<uint8_t, int8_t>({2, 3, 16, 64}, {64, 33}, 3, -5);
  ExpectPathsAgree<int8_t, int8_t>({4, 9, 20}, {4, 20, 7}, -7, 2);
  ExpectPathsAgree<int8_t, int8_t>({5, 300}, {300, 1}, 0, 0);
  // Operands oneDNN is not given: uint8 B, and a broadcast batch of A.
  ExpectPathsAgree<uint8_t, uint8_t>({8, 8}, {8, 8}, 1, 200);
  ExpectPathsAgree<int8_t, int8_t>({1, 4, 6}, {3, 6, 5}, 1, 1);
}

}  // namespace
}  // namespace scopeflow
