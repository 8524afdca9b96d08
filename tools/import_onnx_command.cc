#include "tools/import_onnx_command.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/net_io.h"
#include "framework/onnx/onnx_importer.h"
#include "platform/status_macros.h"

namespace scopeflow {

absl::Status ImportOnnxCommand(const std::string& model,
                               const std::string& out_net,
                               const std::string& out_params,
                               bool rewrite) {
  SF_CHECK(!model.empty() && !out_net.empty(),
           "import-onnx needs an ONNX model and an output net path");
  SF_ASSIGN_OR_RETURN(const onnx::ModelProto proto, ReadOnnxModel(model));
  ImportOptions options;
  options.fuse_decomposed = rewrite;
  options.fold_constants = rewrite;
  absl::StatusOr<ImportedModel> imported = ImportOnnx(proto, options);
  if (!imported.ok()) {
    return absl::Status(imported.status().code(),
                        absl::StrCat(model, ": ", imported.status().message()));
  }
  SF_CHECK(!out_params.empty() || imported->params.empty(),
           "%s has %d parameter(s): give a path to save them to", model,
           imported->params.size());
  SF_RETURN_IF_ERROR(SaveNet(imported->net, out_net));
  if (!out_params.empty()) {
    SF_RETURN_IF_ERROR(SaveImportedParams(*imported, out_params));
  }
  std::printf("imported %s: %d op(s), %zu parameter(s)\n", model.c_str(),
              imported->net.blocks(0).ops_size(), imported->params.size());
  std::printf("inputs: %s\n", absl::StrJoin(imported->inputs, ", ").c_str());
  std::printf("outputs: %s\n", absl::StrJoin(imported->outputs, ", ").c_str());
  std::printf("wrote %s%s%s\n", out_net.c_str(),
              out_params.empty() ? "" : " and ", out_params.c_str());
  return absl::OkStatus();
}

}  // namespace scopeflow
