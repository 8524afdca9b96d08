// LoadOnnxExternalData (onnx_importer.h): ONNX's external data, where
// models over protobuf's 2 GB limit keep tensors in side files. Each such
// tensor (data_location EXTERNAL) names its file by `location`, relative to
// the model's directory, and its bytes by `offset` and `length`; the bytes
// are those raw_data would hold. They are read into raw_data, so that the
// rest of the importer decodes every tensor alike.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "framework/onnx/onnx_importer.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;

// Where one tensor's data lies.
struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

absl::StatusOr<ExternalRef> ParseRef(const onnx::TensorProto& tensor) {
  ExternalRef ref;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      ref.location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      uint64_t value = 0;
      SF_CHECK(absl::SimpleAtoi(entry.value(), &value),
               "tensor \"%s\": external data %s \"%s\" is no non-negative "
               "integer",
               tensor.name(), entry.key(), entry.value());
      if (entry.key() == "offset") {
        ref.offset = value;
      } else {
        ref.length = value;
      }
    }
    // Other keys (checksum, or ones a writer adds) do not affect the bytes.
  }
  SF_CHECK(!ref.location.empty(),
           "tensor \"%s\": its data is external, but it names no location",
           tensor.name());
  return ref;
}

// The directories a model's external data may lie in: the model file's
// directory, and the real directory of the model file when that is a
// symbolic link (as in bazel's runfiles, or a download cache linking a
// model and its data to content-addressed blobs side by side).
struct DataDirs {
  // Where locations are relative to.
  fs::path dir;
  // The real paths that a location's real path must lie in.
  std::vector<fs::path> roots;
};

DataDirs DataDirsOf(const std::string& model_path) {
  DataDirs dirs;
  dirs.dir = fs::path(model_path).parent_path();
  if (dirs.dir.empty()) dirs.dir = ".";
  std::error_code error;
  fs::path real = fs::canonical(dirs.dir, error);
  if (!error) dirs.roots.push_back(real);
  real = fs::canonical(model_path, error);
  if (!error) dirs.roots.push_back(real.parent_path());
  return dirs;
}

bool Inside(const fs::path& path, const fs::path& root) {
  const fs::path relative = path.lexically_relative(root);
  return !relative.empty() && *relative.begin() != "..";
}

// The file `location` names inside the model's directory, which it may not
// leave: not an absolute path, no ".." above the directory, and no
// symbolic link out of it (see DataDirs).
absl::StatusOr<fs::path> ResolveLocation(const DataDirs& dirs,
                                         const std::string& location,
                                         const std::string& tensor) {
  const fs::path relative(location);
  SF_CHECK(!relative.has_root_name() && !relative.has_root_directory(),
           "tensor \"%s\": external data location \"%s\" is an absolute path; "
           "ONNX locations are relative to the model's directory",
           tensor, location);
  const fs::path normal = relative.lexically_normal();
  SF_CHECK(!normal.empty() && *normal.begin() != "..",
           "tensor \"%s\": external data location \"%s\" leads outside the "
           "model's directory \"%s\"",
           tensor, location, dirs.dir.string());
  const fs::path path = dirs.dir / normal;
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  if (error) {
    return absl::NotFoundError(absl::StrFormat(
        "tensor \"%s\": cannot open its external data file %s: %s", tensor,
        path.string(), error.message()));
  }
  SF_CHECK(absl::c_any_of(dirs.roots,
                          [&](const fs::path& root) {
                            return Inside(real, root);
                          }),
           "tensor \"%s\": external data location \"%s\" leads outside the "
           "model's directory \"%s\" (to %s, through a symbolic link)",
           tensor, location, dirs.dir.string(), real.string());
  return real;
}

absl::Status LoadTensor(const DataDirs& dirs, onnx::TensorProto& tensor) {
  SF_ASSIGN_OR_RETURN(const ExternalRef ref, ParseRef(tensor));
  SF_ASSIGN_OR_RETURN(const fs::path path,
                      ResolveLocation(dirs, ref.location, tensor.name()));
  std::error_code error;
  const uint64_t size = fs::file_size(path, error);
  SF_CHECK(!error && fs::is_regular_file(path),
           "tensor \"%s\": external data file %s is no regular file",
           tensor.name(), path.string());
  SF_CHECK(ref.offset <= size,
           "tensor \"%s\": external data offset %d lies beyond the end of %s "
           "(%d bytes)",
           tensor.name(), ref.offset, path.string(), size);
  const uint64_t length = ref.length.value_or(size - ref.offset);
  SF_CHECK(length <= size - ref.offset,
           "tensor \"%s\": external data of %d bytes at offset %d runs beyond "
           "the end of %s (%d bytes)",
           tensor.name(), length, ref.offset, path.string(), size);
  std::ifstream file(path, std::ios::binary);
  std::string bytes(length, '\0');
  file.seekg(static_cast<std::streamoff>(ref.offset));
  file.read(bytes.data(), static_cast<std::streamsize>(length));
  if (!file) {
    return absl::DataLossError(absl::StrFormat(
        "tensor \"%s\": cannot read %d bytes at offset %d of %s",
        tensor.name(), length, ref.offset, path.string()));
  }
  tensor.set_raw_data(std::move(bytes));
  tensor.clear_external_data();
  tensor.clear_data_location();
  return absl::OkStatus();
}

absl::Status LoadGraph(const DataDirs& dirs, onnx::GraphProto& graph);

absl::Status LoadAttribute(const DataDirs& dirs, onnx::AttributeProto& attr) {
  if (attr.has_t() &&
      attr.t().data_location() == onnx::TensorProto::EXTERNAL) {
    SF_RETURN_IF_ERROR(LoadTensor(dirs, *attr.mutable_t()));
  }
  for (onnx::TensorProto& tensor : *attr.mutable_tensors()) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      SF_RETURN_IF_ERROR(LoadTensor(dirs, tensor));
    }
  }
  if (attr.has_g()) SF_RETURN_IF_ERROR(LoadGraph(dirs, *attr.mutable_g()));
  for (onnx::GraphProto& graph : *attr.mutable_graphs()) {
    SF_RETURN_IF_ERROR(LoadGraph(dirs, graph));
  }
  return absl::OkStatus();
}

absl::Status LoadGraph(const DataDirs& dirs, onnx::GraphProto& graph) {
  for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      SF_RETURN_IF_ERROR(LoadTensor(dirs, tensor));
    }
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      SF_RETURN_IF_ERROR(LoadAttribute(dirs, attr));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LoadOnnxExternalData(onnx::ModelProto& model,
                                  const std::string& model_path) {
  if (!model.has_graph()) return absl::OkStatus();
  return LoadGraph(DataDirsOf(model_path), *model.mutable_graph());
}

}  // namespace scopeflow
