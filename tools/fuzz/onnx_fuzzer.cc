// libFuzzer target for the ONNX importer.
//
// ONNX models arrive from other tools and from users, so every byte string
// must end in either a net or an error status: never a crash, a hang or
// undefined behaviour. This parses the bytes as a binary onnx.ModelProto,
// imports it (which converts every node and checks each emitted op against
// scopeflow's shape inference) and prepares what it imported, with every
// operator registered. Build and run: FUZZ_TARGET=onnx tools/fuzz/run.sh
// (see tools/fuzz/README.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/onnx/onnx_importer.h"
#include "google/protobuf/stubs/logging.h"
#include "platform/place.h"
#include "proto/onnx.pb.h"

namespace {

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
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) return 0;
  const absl::StatusOr<scopeflow::ImportedModel> imported =
      scopeflow::ImportOnnx(model);
  if (!imported.ok()) return 0;
  const scopeflow::Executor executor;
  executor.Prepare(imported->net, 0, scopeflow::CPUPlace()).IgnoreError();
  return 0;
}
