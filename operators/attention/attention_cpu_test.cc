// The kernels split into several blocks of query rows give what one block
// gives (the op's tests check one block against references and numeric
// gradients; their inputs are too small for the kernels to split).
#include "operators/attention/attention_cpu.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::DoubleNear;
using ::testing::Pointwise;

std::vector<double> Random(int64_t n, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> values(n);
  for (double& x : values) x = dist(engine);
  return values;
}

struct Results {
  std::vector<double> out, dq, dk, dv, dmask;
  double dscale = 0;
};

Results Run(const AttentionInputs& inputs, int64_t rows_per_block) {
  AttentionShape shape = MakeAttentionShape(inputs);
  shape.rows_per_block = rows_per_block;
  const std::vector<double> q = Random(NumElements(inputs.q), 1);
  const std::vector<double> k = Random(NumElements(inputs.k), 2);
  const std::vector<double> v = Random(NumElements(inputs.v), 3);
  const std::vector<double> mask = Random(NumElements(inputs.mask), 4);
  const double scale = 0.7;
  Results r;
  r.out.resize(shape.batch * shape.lq * shape.dv);
  EXPECT_TRUE(AttentionForward<double>(shape, scale, q.data(), k.data(),
                                       v.data(), mask.data(), r.out.data())
                  .ok());
  const std::vector<double> g = Random(r.out.size(), 5);
  r.dq.resize(q.size());
  r.dk.resize(k.size());
  r.dv.resize(v.size());
  r.dmask.resize(mask.size());
  EXPECT_TRUE(AttentionBackward<double>(
                  shape, scale, q.data(), k.data(), v.data(), mask.data(),
                  r.out.data(), g.data(), r.dq.data(), r.dk.data(),
                  r.dv.data(), r.dmask.data(), &r.dscale)
                  .ok());
  return r;
}

void ExpectSame(const AttentionInputs& inputs) {
  const Results one = Run(inputs, 1000);
  for (int64_t rows : {1, 7, 16}) {
    SCOPED_TRACE(rows);
    const Results split = Run(inputs, rows);
    EXPECT_THAT(split.out, Pointwise(DoubleNear(1e-12), one.out));
    EXPECT_THAT(split.dq, Pointwise(DoubleNear(1e-12), one.dq));
    EXPECT_THAT(split.dk, Pointwise(DoubleNear(1e-12), one.dk));
    EXPECT_THAT(split.dv, Pointwise(DoubleNear(1e-12), one.dv));
    EXPECT_THAT(split.dmask, Pointwise(DoubleNear(1e-12), one.dmask));
    EXPECT_NEAR(split.dscale, one.dscale, 1e-10);
  }
}

TEST(AttentionCpuTest, BlocksOfRowsGiveWhatOneBlockGives) {
  AttentionInputs seq_first;
  seq_first.q = {37, 6, 8};
  seq_first.k = {11, 6, 8};
  seq_first.v = {11, 6, 5};
  seq_first.has_mask = true;
  seq_first.mask = {37, 11};
  seq_first.seq_first = true;
  ExpectSame(seq_first);
  AttentionInputs transposed;
  transposed.q = {2, 3, 40, 4};
  transposed.k = {2, 3, 4, 9};
  transposed.v = {2, 3, 9, 3};
  transposed.has_mask = true;
  transposed.mask = {2, 1, 1, 9};
  transposed.transpose_k = true;
  ExpectSame(transposed);
}

TEST(AttentionCpuTest, RowsPerBlockKeepsTheScoresSmall) {
  AttentionShape shape;
  shape.lq = 197;
  shape.lk = 197;
  EXPECT_EQ(RowsPerBlock(shape), 197);  // 39 Ki scores: one block
  shape.lq = shape.lk = 1024;
  EXPECT_EQ(RowsPerBlock(shape), 64);  // 64 Ki scores a block
  shape.lq = 100;
  shape.lk = 1000;
  EXPECT_EQ(RowsPerBlock(shape), 50);  // two even blocks, not 65 and 35
  shape.lk = 100000;
  EXPECT_EQ(RowsPerBlock(shape), 15);  // 7 blocks of at most 16
}

}  // namespace
}  // namespace scopeflow
