#include "platform/kept_copies.h"

#include <memory>

#include "gtest/gtest.h"
#include "platform/allocator.h"

namespace scopeflow {
namespace {

std::shared_ptr<const Allocation> SomeCopy() {
  absl::StatusOr<Allocator*> allocator = GetAllocator(CPUPlace());
  EXPECT_TRUE(allocator.ok());
  absl::StatusOr<std::shared_ptr<Allocation>> copy = (*allocator)->Allocate(64);
  EXPECT_TRUE(copy.ok());
  return *copy;
}

TEST(KeptCopiesTest, ASecondAskOfTheSameVersionIsSeen) {
  KeptCopies copies;
  const KeptCopyKey key{0, 4, 8, 8};
  KeptCopies::Found first = copies.Lookup(key, 1);
  EXPECT_FALSE(first.asked_before);
  EXPECT_EQ(first.copy, nullptr);
  KeptCopies::Found second = copies.Lookup(key, 1);
  EXPECT_TRUE(second.asked_before);
  EXPECT_EQ(second.copy, nullptr);
  // Another part of the same contents is another key.
  EXPECT_FALSE(copies.Lookup(KeptCopyKey{256, 4, 8, 8}, 1).asked_before);
  EXPECT_FALSE(copies.Lookup(KeptCopyKey{0, 4, 8, 16}, 1).asked_before);
}

TEST(KeptCopiesTest, ACopyServesItsVersionOnly) {
  KeptCopies copies;
  const KeptCopyKey key{0, 4, 8, 8};
  copies.Lookup(key, 3);
  const std::shared_ptr<const Allocation> copy = SomeCopy();
  copies.Keep(key, 3, copy);
  EXPECT_EQ(copies.NumCopies(), 1);
  EXPECT_EQ(copies.Lookup(key, 3).copy, copy);
  // The contents were written: the copy is dropped, and the new version
  // counts as asked for once.
  KeptCopies::Found after_write = copies.Lookup(key, 4);
  EXPECT_EQ(after_write.copy, nullptr);
  EXPECT_FALSE(after_write.asked_before);
  EXPECT_EQ(copies.NumCopies(), 0);
  EXPECT_TRUE(copies.Lookup(key, 4).asked_before);
  // A copy made from an older version than the one asked for is not used.
  copies.Keep(key, 3, copy);
  EXPECT_EQ(copies.Lookup(key, 4).copy, nullptr);
}

TEST(KeptCopiesTest, TheKeyAskedForLeastRecentlyGoesFirst) {
  KeptCopies copies;
  const std::shared_ptr<const Allocation> copy = SomeCopy();
  for (int64_t i = 0; i < static_cast<int64_t>(KeptCopies::kMostKeys); ++i) {
    copies.Keep(KeptCopyKey{0, i + 1, 8, 8}, 1, copy);
  }
  EXPECT_EQ(copies.NumCopies(), static_cast<int>(KeptCopies::kMostKeys));
  // Key 1 was kept first; asking for it makes key 2 the oldest.
  EXPECT_NE(copies.Lookup(KeptCopyKey{0, 1, 8, 8}, 1).copy, nullptr);
  copies.Lookup(KeptCopyKey{0, 99, 8, 8}, 1);
  EXPECT_EQ(copies.NumCopies(), static_cast<int>(KeptCopies::kMostKeys) - 1);
  EXPECT_NE(copies.Lookup(KeptCopyKey{0, 1, 8, 8}, 1).copy, nullptr);
  EXPECT_EQ(copies.Lookup(KeptCopyKey{0, 2, 8, 8}, 1).copy, nullptr);
}

TEST(KeptCopiesTest, AllocationsCountTheirWrites) {
  const std::shared_ptr<const Allocation> copy = SomeCopy();
  absl::StatusOr<std::shared_ptr<Allocation>> allocation =
      (*GetAllocator(CPUPlace()))->Allocate(16);
  ASSERT_TRUE(allocation.ok());
  const uint64_t before = (*allocation)->version();
  (*allocation)->MarkWritten();
  EXPECT_NE((*allocation)->version(), before);
  EXPECT_TRUE((*allocation)->tracks_writes());
  // The copies die with the allocation that keeps them.
  (*allocation)->kept_copies().Keep(KeptCopyKey{0, 1, 4, 4}, 1, copy);
  EXPECT_EQ(copy.use_count(), 2);
  allocation->reset();
  EXPECT_EQ(copy.use_count(), 1);
}

}  // namespace
}  // namespace scopeflow
