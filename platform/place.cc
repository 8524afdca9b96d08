#include "platform/place.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace scopeflow {

std::string Place::ToString() const {
  if (is_cpu()) return "cpu";
  return absl::StrCat("cuda:", device_);
}

std::ostream& operator<<(std::ostream& os, const Place& place) {
  return os << place.ToString();
}

absl::StatusOr<Place> ParsePlace(absl::string_view text) {
  if (text == "cpu") return CPUPlace();
  if (text == "cuda") return CUDAPlace(0);
  absl::string_view rest = text;
  int device = -1;
  if (absl::ConsumePrefix(&rest, "cuda:") && absl::SimpleAtoi(rest, &device) &&
      device >= 0) {
    return CUDAPlace(device);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown place \"%s\": expected \"cpu\", \"cuda\" or \"cuda:N\" with "
      "N >= 0",
      text));
}

}  // namespace scopeflow
