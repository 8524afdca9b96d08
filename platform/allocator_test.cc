#include "platform/allocator.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/cpu_allocator.h"
#include "platform/cuda_runtime.h"
#include "platform/device.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

TEST(CpuAllocatorTest, AlignsAndCounts) {
  auto allocator = std::make_shared<CpuAllocator>();
  {
    auto a = allocator->Allocate(100);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*a)->data()) % kAllocationAlignment,
              0);
    EXPECT_EQ((*a)->size(), 100);
    EXPECT_EQ((*a)->place(), CPUPlace());
    std::memset((*a)->data(), 7, 100);
    auto b = allocator->Allocate(1000);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*b)->data()) % kAllocationAlignment,
              0);
    AllocatorStats stats = allocator->stats();
    EXPECT_EQ(stats.bytes_in_use, 1100);
    EXPECT_EQ(stats.peak_bytes_in_use, 1100);
    EXPECT_EQ(stats.num_allocations, 2);
    EXPECT_EQ(stats.live_allocations, 2);
  }
  AllocatorStats stats = allocator->stats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.peak_bytes_in_use, 1100);
  EXPECT_EQ(stats.num_allocations, 2);
  EXPECT_EQ(stats.live_allocations, 0);
}

TEST(CpuAllocatorTest, ZeroBytesCountsAsNothing) {
  auto allocator = std::make_shared<CpuAllocator>();
  auto a = allocator->Allocate(0);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->data(), nullptr);
  EXPECT_EQ(allocator->stats().num_allocations, 0);
}

TEST(CpuAllocatorTest, ImpossibleSizeIsResourceExhausted) {
  auto allocator = std::make_shared<CpuAllocator>();
  auto a = allocator->Allocate(SIZE_MAX - 8);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(a.status().message(), HasSubstr("out of memory on cpu"));
  EXPECT_THAT(a.status().message(), HasSubstr("bytes in use"));
}

TEST(CpuAllocatorTest, AllocationOutlivesItsLastOtherOwner) {
  std::shared_ptr<Allocation> kept;
  {
    auto allocator = std::make_shared<CpuAllocator>();
    kept = *allocator->Allocate(64);
  }
  std::memset(kept->data(), 1, 64);
  EXPECT_EQ(kept->place(), CPUPlace());
}

TEST(CpuAllocatorTest, StatisticsStayExactUnderThreads) {
  auto allocator = std::make_shared<CpuAllocator>();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&allocator] {
      for (int i = 0; i < 2000; ++i) {
        auto a = allocator->Allocate(64 + i % 7);
        ASSERT_TRUE(a.ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  AllocatorStats stats = allocator->stats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.live_allocations, 0);
  EXPECT_EQ(stats.num_allocations, 8000);
  EXPECT_GE(stats.peak_bytes_in_use, 64);
  EXPECT_LE(stats.peak_bytes_in_use, 4 * 70);
}

// Small blocks freed on one thread are reused by that thread's next
// allocation of the same size; blocks freed on another thread are kept
// there. Either way every block is aligned, whole and counted once.
TEST(CpuAllocatorTest, ReusedSmallBlocksStayAlignedAndCounted) {
  auto allocator = std::make_shared<CpuAllocator>();
  std::vector<std::shared_ptr<Allocation>> blocks;
  for (int round = 0; round < 3; ++round) {
    for (size_t bytes : {1, 63, 64, 65, 1000, 4096, 5000}) {
      auto block = allocator->Allocate(bytes);
      ASSERT_TRUE(block.ok());
      EXPECT_EQ(
          reinterpret_cast<uintptr_t>((*block)->data()) % kAllocationAlignment,
          0u);
      std::memset((*block)->data(), round, bytes);
      blocks.push_back(*block);
    }
    EXPECT_EQ(allocator->stats().live_allocations, 7);
    EXPECT_EQ(allocator->stats().bytes_in_use,
              1 + 63 + 64 + 65 + 1000 + 4096 + 5000);
    if (round == 1) {
      // Freed on another thread this time.
      std::thread([&blocks] { blocks.clear(); }).join();
    } else {
      blocks.clear();
    }
    EXPECT_EQ(allocator->stats().bytes_in_use, 0);
    EXPECT_EQ(allocator->stats().live_allocations, 0);
  }
}

// The VmFlags line of the mapping in /proc/self/smaps that holds `address`,
// or "" if none does.
std::string VmFlagsOfMappingHolding(const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0;
    uintptr_t end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(CpuAllocatorTest, LargeBlocksStartOnAHugePageAndAreAdvisedForOne) {
  constexpr size_t kHugePage = size_t{2} << 20;
  auto allocator = std::make_shared<CpuAllocator>();
  for (size_t bytes : {kHugePage, 2 * kHugePage + 100}) {
    auto block = allocator->Allocate(bytes);
    ASSERT_TRUE(block.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*block)->data()) % kHugePage, 0u)
        << bytes << " bytes";
    std::memset((*block)->data(), 1, bytes);
    if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) {
      // "hg": the mapping was advised MADV_HUGEPAGE.
      EXPECT_THAT(VmFlagsOfMappingHolding((*block)->data()), HasSubstr(" hg"))
          << bytes << " bytes";
    }
  }
  // Set off, a large block is still a working block.
  SetHugePagesForLargeHostBlocks(false);
  EXPECT_FALSE(HugePagesForLargeHostBlocks());
  auto on_small_pages = allocator->Allocate(3 * kHugePage);
  SetHugePagesForLargeHostBlocks(true);
  EXPECT_TRUE(HugePagesForLargeHostBlocks());
  ASSERT_TRUE(on_small_pages.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*on_small_pages)->data()) %
                kAllocationAlignment,
            0u);
  std::memset((*on_small_pages)->data(), 2, 3 * kHugePage);
  // Below a huge page, blocks keep the C library's placement.
  auto small = allocator->Allocate(kHugePage - kAllocationAlignment);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(
      reinterpret_cast<uintptr_t>((*small)->data()) % kAllocationAlignment, 0u);
}

TEST(AllocatorRegistryTest, CpuStatisticsArePerPlace) {
  AllocatorStats before = *GetAllocatorStats(CPUPlace());
  Allocator* cpu = *GetAllocator(CPUPlace());
  EXPECT_EQ(cpu->place(), CPUPlace());
  auto a = cpu->Allocate(4096);
  ASSERT_TRUE(a.ok());
  AllocatorStats during = *GetAllocatorStats(CPUPlace());
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 4096);
  EXPECT_EQ(during.num_allocations - before.num_allocations, 1);
}

TEST(AllocatorRegistryTest, MissingCudaDeviceIsAClearError) {
  const Place past_last = CUDAPlace(CudaDeviceCount());
  absl::StatusOr<Allocator*> allocator = GetAllocator(past_last);
  ASSERT_FALSE(allocator.ok());
  EXPECT_EQ(allocator.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(allocator.status().message(),
              HasSubstr(absl::StrCat("place ", past_last.ToString(),
                                     " is not available")));
  EXPECT_FALSE(GetAllocatorStats(past_last).ok());
}

TEST(DeviceTest, CopiesBetweenCpuBuffers) {
  const char src[] = "scopeflow";
  char dst[sizeof(src)] = {};
  ASSERT_TRUE(CopyBytes(CPUPlace(), dst, CPUPlace(), src, sizeof(src)).ok());
  EXPECT_STREQ(dst, "scopeflow");
}

TEST(DeviceTest, CudaRoundTrip) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device present";
  Allocator* gpu = *GetAllocator(CUDAPlace(0));
  auto block = gpu->Allocate(256);
  ASSERT_TRUE(block.ok());
  std::vector<int32_t> host(64), back(64);
  for (int i = 0; i < 64; ++i) host[i] = i * i;
  ASSERT_TRUE(
      CopyBytes(CUDAPlace(0), (*block)->data(), CPUPlace(), host.data(), 256)
          .ok());
  ASSERT_TRUE(
      CopyBytes(CPUPlace(), back.data(), CUDAPlace(0), (*block)->data(), 256)
          .ok());
  EXPECT_EQ(host, back);
  EXPECT_EQ((*GetAllocatorStats(CUDAPlace(0))).bytes_in_use, 256);
}

}  // namespace
}  // namespace scopeflow
