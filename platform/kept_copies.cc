#include "platform/kept_copies.h"

#include <algorithm>
#include <utility>

#include "platform/allocator.h"

namespace scopeflow {

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

}  // namespace scopeflow
