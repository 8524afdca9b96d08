// libFuzzer target for the .npy reader (framework/npy.h).
//
// Inputs fed with `scopeflow run --feed` are .npy files from anywhere, so
// every byte string must end in a tensor or an error status: never a
// crash, a hang, undefined behaviour or an allocation the file's own size
// does not justify (the data is checked against the declared shape before
// any tensor is allocated). A tensor that parses must serialise back and
// parse again to the same bytes: the writer and the reader agree.
// Build and run: FUZZ_TARGET=npy tools/fuzz/run.sh (see README.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/npy.h"
#include "framework/tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<scopeflow::Tensor> tensor = scopeflow::ParseNpy(bytes);
  if (!tensor.ok()) return 0;
  const absl::StatusOr<std::string> written = scopeflow::SerializeNpy(*tensor);
  if (!written.ok()) {
    std::fprintf(stderr, "a parsed tensor does not serialise: %s\n",
                 std::string(written.status().message()).c_str());
    std::abort();
  }
  const absl::StatusOr<scopeflow::Tensor> again = scopeflow::ParseNpy(*written);
  if (!again.ok() || again->dims() != tensor->dims() ||
      again->dtype() != tensor->dtype() ||
      (tensor->nbytes() > 0 &&
       std::memcmp(again->raw_data(), tensor->raw_data(), tensor->nbytes()) !=
           0)) {
    std::fprintf(stderr, "a serialised tensor does not parse back whole\n");
    std::abort();
  }
  return 0;
}
