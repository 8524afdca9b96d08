// Mutexes for scopeflow's own data structures.
//
// They wrap the standard library's mutexes (pthread underneath) rather than
// absl::Mutex because ThreadSanitizer understands pthread locking, while the
// Debian build of Abseil is not instrumented and would leave TSan blind to
// absl::Mutex. The Abseil thread-safety annotations still apply, so clang's
// -Wthread-safety checks ABSL_GUARDED_BY members.
#ifndef SCOPEFLOW_PLATFORM_MUTEX_H_
#define SCOPEFLOW_PLATFORM_MUTEX_H_

#include <mutex>
#include <shared_mutex>

#include "absl/base/thread_annotations.h"

namespace scopeflow {

// A reader-writer mutex: any number of readers or one writer.
class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mutex_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mutex_.unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mutex_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

// Holds `mutex` exclusively for the lock's lifetime.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mutex) ABSL_EXCLUSIVE_LOCK_FUNCTION(mutex)
      : mutex_(mutex) {
    mutex_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mutex_->Unlock(); }

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mutex_;
};

// Holds `mutex` shared (as a reader) for the lock's lifetime.
class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(Mutex* mutex) ABSL_SHARED_LOCK_FUNCTION(mutex)
      : mutex_(mutex) {
    mutex_->ReaderLock();
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mutex_->ReaderUnlock(); }

  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  Mutex* const mutex_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_MUTEX_H_
