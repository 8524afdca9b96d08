#include "platform/kept_copies.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "platform/allocator.h"

namespace scopeflow {
namespace {

// Kept copies of all buffers together stay within this; beyond it, kernels
// derive what they need on every run instead.
constexpr int64_t kMostBytesOfKeptCopies = int64_t{1} << 30;  // 1 GiB
std::atomic<int64_t> bytes_of_kept_copies{0};

// A kept copy's memory, counted in bytes_of_kept_copies while it lives.
struct CountedCopy {
  std::shared_ptr<Allocation> allocation;
  int64_t bytes = 0;
  ~CountedCopy() { bytes_of_kept_copies.fetch_sub(bytes); }
};

}  // namespace

KeptCopies::Entry* KeptCopies::Touch(const KeptCopyKey& key) {
  auto found =
      std::find_if(entries_.begin(), entries_.end(),
                   [&](const Entry& entry) { return entry.key == key; });
  if (found == entries_.end()) return nullptr;
  std::rotate(entries_.begin(), found, found + 1);
  return &entries_.front();
}

KeptCopies::Found KeptCopies::Lookup(const KeptCopyKey& key, uint64_t version) {
  MutexLock lock(&mutex_);
  Entry* entry = Touch(key);
  if (entry == nullptr) {
    if (entries_.size() == kMostKeys) entries_.pop_back();
    entries_.insert(entries_.begin(), Entry{key, version, nullptr});
    return Found{};
  }
  if (entry->version != version) {
    entry->version = version;
    entry->copy.reset();
    return Found{};
  }
  return Found{entry->copy, true};
}

void KeptCopies::Keep(const KeptCopyKey& key, uint64_t version,
                      std::shared_ptr<const Allocation> copy) {
  MutexLock lock(&mutex_);
  Entry* entry = Touch(key);
  if (entry == nullptr) {
    if (entries_.size() == kMostKeys) entries_.pop_back();
    entries_.insert(entries_.begin(), Entry{key, version, std::move(copy)});
    return;
  }
  entry->version = version;
  entry->copy = std::move(copy);
}

int KeptCopies::NumCopies() const {
  MutexLock lock(&mutex_);
  return static_cast<int>(
      std::count_if(entries_.begin(), entries_.end(),
                    [](const Entry& entry) { return entry.copy != nullptr; }));
}

std::shared_ptr<const Allocation> KeptCopyOf(
    const Allocation& buffer, const KeptCopyKey& key, size_t bytes,
    const std::function<void(void* copy)>& fill) {
  if (!buffer.tracks_writes() || !buffer.place().is_cpu()) return nullptr;
  const uint64_t version = buffer.version();
  KeptCopies::Found found = buffer.kept_copies().Lookup(key, version);
  if (found.copy != nullptr || !found.asked_before) return found.copy;
  const int64_t size = static_cast<int64_t>(bytes);
  if (bytes_of_kept_copies.fetch_add(size) + size > kMostBytesOfKeptCopies) {
    bytes_of_kept_copies.fetch_sub(size);
    return nullptr;
  }
  // Counted from here on: the budget is given back when `counted` dies,
  // whether or not the copy is made.
  auto counted = std::make_shared<CountedCopy>();
  counted->bytes = size;
  absl::StatusOr<Allocator*> allocator = GetAllocator(CPUPlace());
  if (!allocator.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<Allocation>> allocation =
      (*allocator)->Allocate(bytes);
  if (!allocation.ok()) return nullptr;
  counted->allocation = *std::move(allocation);
  fill(counted->allocation->data());
  std::shared_ptr<const Allocation> copy(counted, counted->allocation.get());
  buffer.kept_copies().Keep(key, version, copy);
  return copy;
}

}  // namespace scopeflow
