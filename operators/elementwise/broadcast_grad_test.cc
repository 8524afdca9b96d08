// ReduceBroadcastGrad against a direct sum over the output's elements, for
// shapes that take each of its paths.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operators/elementwise/broadcast.h"

namespace scopeflow {
namespace elementwise {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// The offset in an operand of shape `dims` of the output element at
// multi-index `index` (the operand aligned to the right, broadcast where its
// dimension is 1).
int64_t OperandOffset(const Dims& dims, const Dims& index) {
  const size_t pad = index.size() - dims.size();
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    offset = offset * dims[d] + (dims[d] == 1 ? 0 : index[pad + d]);
  }
  return offset;
}

// grad[a] = sum over o of term(o, a, b), element by element.
template <typename Term>
std::vector<double> Reference(const Dims& out, const Dims& a_dims,
                              const Dims& b_dims, Term term) {
  std::vector<double> grad(NumElements(a_dims), 0.0);
  const int64_t n = NumElements(out);
  Dims index(out.size(), 0);
  for (int64_t o = 0; o < n; ++o) {
    const int64_t a = OperandOffset(a_dims, index);
    grad[a] += term(o, a, OperandOffset(b_dims, index));
    for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return grad;
}

struct Case {
  Dims out;
  Dims a;
  Dims b;
};

TEST(ReduceBroadcastGradTest, MatchesADirectSumForEveryPath) {
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, {2, 3}},  // same shapes
      {{2, 3}, {2, 3}, {1}},     // B a single element
      {{2, 3}, {2, 3}, {3}},     // B a bias
      {{2, 3}, {1}, {2, 3}},     // A a single element
      {{2, 3}, {1, 1}, {1}},     // both single elements
      {{2, 3}, {3}, {2, 3}},     // A a bias
      {{2, 3, 4}, {1, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {2, 1, 4}, {3, 1}},  // general: rows into A
      {{2, 3, 4}, {3, 1}, {2, 1, 4}},  // general: rows reduced
      {{2, 3, 4}, {2, 3, 4}, {3, 1}},  // A full, B neither bias nor scalar
      {{2, 3}, {2, 1}, {1, 3}},
      {{4, 1, 5}, {4, 1, 1}, {5}},
      // Reductions longer than SumOf's lanes, with a remainder.
      {{3, 19}, {1}, {3, 19}},
      {{2, 21}, {2, 1}, {21}},
      {{2, 21}, {2, 1}, {1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(DimsToString(c.out) + " from " + DimsToString(c.a) + ", " +
                 DimsToString(c.b));
    // A term that depends on all three offsets, so that a wrong one shows.
    auto term = [](int64_t o, int64_t a, int64_t b) {
      return static_cast<double>((o + 1) * 100 + (a + 1) * 10 + (b + 1)) *
             (o % 2 == 0 ? 1 : -0.5);
    };
    std::vector<double> grad(NumElements(c.a), -7.0);  // Overwritten.
    ReduceBroadcastGrad<double>(c.out, c.a, c.b, grad.data(), term);
    EXPECT_THAT(grad, ElementsAreArray(Reference(c.out, c.a, c.b, term)));
  }
}

TEST(ReduceBroadcastGradTest, EmptyOutputGivesZeros) {
  auto term = [](int64_t, int64_t, int64_t) { return 1.0; };
  std::vector<double> bias(3, -7.0);
  ReduceBroadcastGrad<double>(Dims{0, 3}, Dims{3}, Dims{0, 3}, bias.data(),
                              term);
  EXPECT_THAT(bias, ElementsAre(0, 0, 0));
  std::vector<double> scalar(1, -7.0);
  ReduceBroadcastGrad<double>(Dims{0, 3}, Dims{1}, Dims{0, 3}, scalar.data(),
                              term);
  EXPECT_THAT(scalar, ElementsAre(0));
  std::vector<double> column(2, -7.0);
  ReduceBroadcastGrad<double>(Dims{2, 0}, Dims{2, 1}, Dims{0}, column.data(),
                              term);
  EXPECT_THAT(column, ElementsAre(0, 0));
}

TEST(IsTrailingBlockTest, LeadingOnesAreIgnored) {
  EXPECT_TRUE(IsTrailingBlock(Dims{3}, Dims{2, 3}));
  EXPECT_TRUE(IsTrailingBlock(Dims{1, 1, 3, 4}, Dims{2, 3, 4}));
  EXPECT_TRUE(IsTrailingBlock(Dims{2, 3}, Dims{2, 3}));
  EXPECT_TRUE(IsTrailingBlock(Dims{1}, Dims{2, 3}));
  EXPECT_FALSE(IsTrailingBlock(Dims{3, 1}, Dims{2, 3, 4}));
  EXPECT_FALSE(IsTrailingBlock(Dims{2, 1, 4}, Dims{2, 3, 4}));
  EXPECT_FALSE(IsTrailingBlock(Dims{5, 3}, Dims{3}));
}

}  // namespace
}  // namespace elementwise
}  // namespace scopeflow
