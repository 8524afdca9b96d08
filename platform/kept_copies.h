// Copies that kernels derive from an allocation's contents and keep for
// later runs, each valid for one version of those contents.
#ifndef SCOPEFLOW_PLATFORM_KEPT_COPIES_H_
#define SCOPEFLOW_PLATFORM_KEPT_COPIES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "platform/mutex.h"

namespace scopeflow {

class Allocation;

// Which part of the contents a copy was made from, as a matrix: `rows` rows
// of `cols` elements, `stride` elements apart, from `byte_offset` on; and
// which form the copy has: 0 for the same elements re-spaced, otherwise a
// number the kernel gives each layout it reorders into.
struct KeptCopyKey {
  size_t byte_offset = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;
  uint64_t form = 0;

  bool operator==(const KeptCopyKey& other) const {
    return byte_offset == other.byte_offset && rows == other.rows &&
           cols == other.cols && stride == other.stride && form == other.form;
  }
};

// The copies one allocation keeps (a weight matrix with its rows re-spaced
// for a faster matrix product, say). A copy is worth keeping only for
// contents that stay the same from run to run: an inference net's weights
// do, a training net's change every step. So a copy is made only the second
// time the same contents are asked for, and training pays nothing. The
// allocation owns its copies, so they die with it. Thread-safe.
class KeptCopies {
 public:
  struct Found {
    // The copy kept for the key at the version asked, or null.
    std::shared_ptr<const Allocation> copy;
    // Whether the same key and version were asked for before this time.
    bool asked_before = false;
  };

  // Looks the copy of `key` up for contents `version` and records the ask.
  // A copy kept for another version is dropped.
  Found Lookup(const KeptCopyKey& key, uint64_t version);

  // Keeps `copy` of `key` for `version`, replacing what was kept for the
  // key. Beyond kMostKeys keys, the one asked for least recently goes.
  void Keep(const KeptCopyKey& key, uint64_t version,
            std::shared_ptr<const Allocation> copy);

  // The number of copies kept (for tests and statistics).
  int NumCopies() const;

  static constexpr size_t kMostKeys = 4;

 private:
  struct Entry {
    KeptCopyKey key;
    uint64_t version = 0;
    std::shared_ptr<const Allocation> copy;
  };

  // Moves the entry of `key` to the front (most recently asked) and returns
  // it, or null.
  Entry* Touch(const KeptCopyKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable Mutex mutex_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mutex_);
};

// The copy of `key` that host memory `buffer` keeps for its current
// contents, made now if these contents were asked for before: `bytes` of new
// host memory that `fill` fills (and has finished writing when it returns).
// Null where no copy is kept: the first ask of a version, memory a caller
// owns, beyond 1 GiB of kept copies in all, or out of memory; the caller
// then derives what it needs for this run only.
std::shared_ptr<const Allocation> KeptCopyOf(
    const Allocation& buffer, const KeptCopyKey& key, size_t bytes,
    const std::function<void(void* copy)>& fill);

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_KEPT_COPIES_H_
