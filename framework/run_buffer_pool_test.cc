#include "framework/run_buffer_pool.h"


#include "framework/tensor.h"
#include "gtest/gtest.h"
#include "platform/allocator.h"

namespace scopeflow {
namespace {

Tensor HostTensor(Dims dims) {
  Tensor t;
  EXPECT_TRUE(t.Allocate(CPUPlace(), kFloat32, std::move(dims)).ok());
  return t;
}

TEST(RunBufferPoolTest, ADeadBufferGoesToTheNextOutputOfItsSize) {
  RunBufferPool pool;
  Tensor dead = HostTensor({4, 4});
  const void* address = dead.raw_data();
  pool.Keep(dead);
  EXPECT_FALSE(dead.initialized());

  Tensor out;
  ASSERT_TRUE(pool.Lend(64, out));
  ASSERT_TRUE(out.Allocate(CPUPlace(), kFloat32, {16}).ok());
  EXPECT_EQ(out.raw_data(), address);
  EXPECT_EQ(out.numel(), 16);
  // Lent once only.
  Tensor another;
  EXPECT_FALSE(pool.Lend(64, another));
  EXPECT_FALSE(another.initialized());
}

TEST(RunBufferPoolTest, LendsOnlyBuffersOfAboutTheSizeAsked) {
  RunBufferPool pool;
  Tensor dead = HostTensor({16});  // 64 bytes
  pool.Keep(dead);
  Tensor out;
  EXPECT_FALSE(pool.Lend(65, out));  // too small
  EXPECT_FALSE(pool.Lend(31, out));  // more than twice what is asked
  EXPECT_FALSE(out.initialized());
  EXPECT_TRUE(pool.Lend(32, out));
}

TEST(RunBufferPoolTest, KeepsNoBufferAnotherTensorViews) {
  RunBufferPool pool;
  Tensor dead = HostTensor({4});
  Tensor view;
  view.ShareBufferWith(dead);
  pool.Keep(dead);
  EXPECT_FALSE(dead.initialized());
  Tensor out;
  EXPECT_FALSE(pool.Lend(16, out));
  EXPECT_TRUE(view.OwnsBufferAlone());
}

TEST(RunBufferPoolTest, KeepsNoLargeBufferAndNoCallersMemory) {
  RunBufferPool pool;
  Tensor large = HostTensor({RunBufferPool::kMostBytes / 4 + 1});
  pool.Keep(large);
  EXPECT_FALSE(large.initialized());
  float lent[4] = {1, 2, 3, 4};
  absl::StatusOr<Tensor> external =
      Tensor::FromExternal(lent, kFloat32, {4}, CPUPlace());
  ASSERT_TRUE(external.ok());
  pool.Keep(*external);
  Tensor out;
  EXPECT_FALSE(pool.Lend(16, out));
  EXPECT_FALSE(pool.Lend(RunBufferPool::kMostBytes, out));
}

TEST(RunBufferPoolTest, KeepsAtMostItsLimitAndFreesTheRest) {
  Allocator* cpu = *GetAllocator(CPUPlace());
  const int64_t live_before = cpu->stats().live_allocations;
  {
    RunBufferPool pool;
    for (size_t i = 0; i < RunBufferPool::kMostKept + 3; ++i) {
      Tensor dead = HostTensor({4});
      pool.Keep(dead);
    }
    EXPECT_EQ(cpu->stats().live_allocations - live_before,
              static_cast<int64_t>(RunBufferPool::kMostKept));
    for (size_t i = 0; i < RunBufferPool::kMostKept; ++i) {
      Tensor out;
      EXPECT_TRUE(pool.Lend(16, out)) << i;
    }
    Tensor out;
    EXPECT_FALSE(pool.Lend(16, out));
  }
  EXPECT_EQ(cpu->stats().live_allocations, live_before);
}

TEST(TensorBufferTest, ReleaseBufferOnlyFromItsSoleView) {
  Tensor alone = HostTensor({2});
  const Allocation* buffer = alone.buffer();
  std::shared_ptr<Allocation> released = alone.ReleaseBuffer();
  EXPECT_EQ(released.get(), buffer);
  EXPECT_FALSE(alone.initialized());
  EXPECT_EQ(alone.numel(), 0);

  Tensor shared = HostTensor({2});
  Tensor view;
  view.ShareBufferWith(shared);
  EXPECT_EQ(shared.ReleaseBuffer(), nullptr);
  EXPECT_FALSE(shared.initialized());
  EXPECT_TRUE(view.initialized());
}

TEST(TensorBufferTest, AnAdoptedBufferIsAnEmptyTensorUntilAllocated) {
  Tensor source = HostTensor({8});
  const void* address = source.raw_data();
  Tensor t;
  t.AdoptBuffer(source.ReleaseBuffer());
  EXPECT_TRUE(t.initialized());
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.dims(), Dims({0}));
  // Larger than the buffer: a new one.
  ASSERT_TRUE(t.Allocate(CPUPlace(), kFloat32, {9}).ok());
  EXPECT_NE(t.raw_data(), address);
}

}  // namespace
}  // namespace scopeflow
