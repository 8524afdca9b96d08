#include "platform/default_place.h"

namespace scopeflow {
namespace {

thread_local Place current_default_place = CPUPlace();

}  // namespace

Place DefaultPlace() { return current_default_place; }

PlaceGuard::PlaceGuard(const Place& place) : previous_(current_default_place) {
  current_default_place = place;
}

PlaceGuard::~PlaceGuard() { current_default_place = previous_; }

}  // namespace scopeflow
