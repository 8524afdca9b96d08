// Place: where memory lives and kernels run.
#ifndef SCOPEFLOW_PLATFORM_PLACE_H_
#define SCOPEFLOW_PLATFORM_PLACE_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace scopeflow {

enum class DeviceType : uint8_t { kCPU = 0, kCUDA = 1 };

// A value type naming a device: the host CPU or CUDA device `n`. Cheap to
// copy, comparable, hashable (absl and std) and printable as "cpu" or
// "cuda:N". Thread-safe as any immutable value.
class Place {
 public:
  // The CPU.
  constexpr Place() : type_(DeviceType::kCPU), device_(0) {}

  constexpr DeviceType type() const { return type_; }
  // The device index; 0 for the CPU.
  constexpr int device() const { return device_; }
  constexpr bool is_cpu() const { return type_ == DeviceType::kCPU; }
  constexpr bool is_cuda() const { return type_ == DeviceType::kCUDA; }

  std::string ToString() const;

  friend constexpr bool operator==(const Place& a, const Place& b) {
    return a.type_ == b.type_ && a.device_ == b.device_;
  }
  friend constexpr bool operator!=(const Place& a, const Place& b) {
    return !(a == b);
  }
  friend constexpr bool operator<(const Place& a, const Place& b) {
    return a.type_ != b.type_ ? a.type_ < b.type_ : a.device_ < b.device_;
  }
  template <typename H>
  friend H AbslHashValue(H h, const Place& place) {
    return H::combine(std::move(h), place.type_, place.device_);
  }

 private:
  friend constexpr Place CUDAPlace(int device);
  constexpr Place(DeviceType type, int device) : type_(type), device_(device) {}

  DeviceType type_;
  int device_;
};

constexpr Place CPUPlace() { return Place(); }
constexpr Place CUDAPlace(int device) {
  return Place(DeviceType::kCUDA, device);
}

std::ostream& operator<<(std::ostream& os, const Place& place);

// Parses "cpu", "cuda" (device 0) or "cuda:N". Anything else is an
// InvalidArgument error naming the text and the accepted forms.
absl::StatusOr<Place> ParsePlace(absl::string_view text);

}  // namespace scopeflow

template <>
struct std::hash<scopeflow::Place> {
  size_t operator()(const scopeflow::Place& place) const {
    return (static_cast<size_t>(place.type()) << 32) ^
           static_cast<size_t>(place.device());
  }
};

#endif  // SCOPEFLOW_PLATFORM_PLACE_H_
