// The calling thread's default place, set with an RAII guard.
#ifndef SCOPEFLOW_PLATFORM_DEFAULT_PLACE_H_
#define SCOPEFLOW_PLATFORM_DEFAULT_PLACE_H_

#include "platform/place.h"

namespace scopeflow {

// The calling thread's default place: the CPU unless a PlaceGuard on this
// thread says otherwise. Each thread has its own; no thread sees another's.
// Executor::Prepare without a place prepares for it.
Place DefaultPlace();

// Makes `place` the calling thread's default place for the guard's lifetime
// and restores the previous default when it is destroyed, also while an
// exception or an early error return unwinds the stack. Guards nest; they
// must be destroyed in reverse order of construction on the thread that made
// them (as local variables are).
class PlaceGuard {
 public:
  explicit PlaceGuard(const Place& place);
  ~PlaceGuard();

  PlaceGuard(const PlaceGuard&) = delete;
  PlaceGuard& operator=(const PlaceGuard&) = delete;

 private:
  Place previous_;
};

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_DEFAULT_PLACE_H_
