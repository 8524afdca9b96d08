// libFuzzer target for the net loader and Executor::Prepare.
//
// Nets arrive as files from users, so every byte string must end in either
// a PreparedNet or an error status: never a crash, a hang or undefined
// behaviour. Prepare is where a net's ops, attributes and shapes are first
// checked (shape inference runs there on whatever dimensions the file
// declares), so this feeds the bytes to ParseNetBinary and ParseNetText and
// prepares every block of what parses, with every operator registered.
// Build and run: tools/fuzz/run.sh (see tools/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/executor.h"
#include "framework/net_io.h"
#include "google/protobuf/stubs/logging.h"
#include "platform/place.h"
#include "proto/framework.pb.h"

namespace {

// An Internal error from Prepare is a bug of ours, not of the net (the
// channels-last rewrite of a valid block that no longer prepares): it
// aborts, so that libFuzzer keeps the input.
void PrepareEveryBlock(const absl::StatusOr<scopeflow::NetDef>& net) {
  if (!net.ok()) return;
  const scopeflow::Executor executor;
  for (int block = 0; block < net->blocks_size(); ++block) {
    const absl::StatusOr<scopeflow::PreparedNet> prepared =
        executor.Prepare(*net, block, scopeflow::CPUPlace());
    if (prepared.status().code() == absl::StatusCode::kInternal) {
      std::fprintf(stderr, "%s\n",
                   std::string(prepared.status().message()).c_str());
      std::abort();
    }
  }
}

void DiscardLog(google::protobuf::LogLevel, const char*, int,
                const std::string&) {}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The binary parser logs each string field that is not UTF-8; the
  // returned status is what is under test, not the log.
  google::protobuf::SetLogHandler(&DiscardLog);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  PrepareEveryBlock(scopeflow::ParseNetBinary(bytes));
  PrepareEveryBlock(scopeflow::ParseNetText(bytes));
  return 0;
}
