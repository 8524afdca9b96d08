#include "tools/params_command.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/npz.h"
#include "framework/param_io.h"
#include "framework/scope.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// The first bytes of every parameter file (param_io.h).
constexpr char kParamMagic[] = "SFPARAM1";
constexpr size_t kParamMagicSize = 8;

// The file's tensors, on the CPU, in file order.
absl::StatusOr<NamedTensors> ReadParams(const std::string& path) {
  Scope scope;
  SF_ASSIGN_OR_RETURN(std::vector<std::string> names,
                      LoadParams(path, scope, CPUPlace()));
  NamedTensors tensors;
  for (const std::string& name : names) {
    SF_ASSIGN_OR_RETURN(const Tensor* tensor,
                        scope.FindVar(name)->Get<Tensor>());
    tensors.emplace_back(name, *tensor);
  }
  return tensors;
}

}  // namespace

absl::StatusOr<bool> IsParameterFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  SF_CHECK_CODE(file != nullptr, absl::StatusCode::kNotFound,
                "cannot open %s: %s", path, std::strerror(errno));
  char magic[kParamMagicSize];
  const size_t read = std::fread(magic, 1, kParamMagicSize, file);
  std::fclose(file);
  return read == kParamMagicSize &&
         std::memcmp(magic, kParamMagic, kParamMagicSize) == 0;
}

absl::Status ParamsCommand(bool to_npz, bool from_npz, const std::string& in,
                           const std::string& out) {
  SF_CHECK(to_npz != from_npz,
           "params: give exactly one of --to_npz (IN.params OUT.npz) and "
           "--from_npz (IN.npz OUT.params)");
  if (to_npz) {
    SF_ASSIGN_OR_RETURN(const NamedTensors tensors, ReadParams(in));
    SF_RETURN_IF_ERROR(WriteNpz(out, tensors));
    std::printf("wrote %zu tensor(s) from %s to %s\n", tensors.size(),
                in.c_str(), out.c_str());
    return absl::OkStatus();
  }
  SF_ASSIGN_OR_RETURN(NamedTensors tensors, ReadNpz(in));
  Scope scope;
  std::vector<std::string> names;
  for (auto& [name, tensor] : tensors) {
    SF_ASSIGN_OR_RETURN(Tensor * slot, scope.Var(name)->GetMutable<Tensor>());
    *slot = std::move(tensor);
    names.push_back(name);
  }
  SF_RETURN_IF_ERROR(SaveParams(scope, names, out));
  std::printf("wrote %zu tensor(s) from %s to %s\n", names.size(), in.c_str(),
              out.c_str());
  return absl::OkStatus();
}

absl::Status ParamsInfoCommand(const std::string& path) {
  SF_ASSIGN_OR_RETURN(const NamedTensors tensors, ReadParams(path));
  std::printf("parameter file %s: %zu tensor(s)\n", path.c_str(),
              tensors.size());
  std::printf("  %-32s %-8s %-18s %12s  %s\n", "name", "dtype", "shape",
              "elements", "crc32");
  int64_t elements = 0;
  size_t bytes = 0;
  for (const auto& [name, tensor] : tensors) {
    const uint32_t crc = static_cast<uint32_t>(crc32_z(
        0, static_cast<const Bytef*>(tensor.raw_data()), tensor.nbytes()));
    std::printf("  %-32s %-8s %-18s %12lld  %08x\n", name.c_str(),
                DataTypeName(tensor.dtype()).c_str(),
                DimsToString(tensor.dims()).c_str(),
                static_cast<long long>(tensor.numel()), crc);
    elements += tensor.numel();
    bytes += tensor.nbytes();
  }
  std::printf("total: %lld element(s), %zu bytes\n",
              static_cast<long long>(elements), bytes);
  return absl::OkStatus();
}

}  // namespace scopeflow
