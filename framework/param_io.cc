#include "framework/param_io.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/tensor.h"
#include "framework/tensor_proto.h"
#include "platform/file.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr char kMagic[] = "SFPARAM1";
constexpr size_t kMagicSize = 8;
constexpr uint32_t kTensorRecord = 1;
constexpr uint32_t kEndRecord = 0;
// Protects against allocating absurd headers from a corrupt size field.
constexpr uint32_t kMaxHeaderSize = 1 << 20;

template <typename T>
std::string LittleEndian(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

uint32_t Crc(uint32_t crc, const void* data, size_t size) {
  return static_cast<uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), size));
}

// Reads a file front to back, naming it in every error.
class Reader {
 public:
  static absl::StatusOr<Reader> Open(const std::string& path) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) {
      const std::string message = absl::StrFormat(
          "cannot open parameter file %s: %s", path, std::strerror(errno));
      return errno == ENOENT ? absl::NotFoundError(message)
                             : absl::UnknownError(message);
    }
    return Reader(path, file);
  }

  absl::Status Read(void* data, size_t size, const char* what) {
    if (std::fread(data, 1, size, file_.get()) != size) {
      return absl::DataLossError(absl::StrFormat(
          "parameter file %s is truncated: it ends inside %s", path_, what));
    }
    return absl::OkStatus();
  }

  template <typename T>
  absl::StatusOr<T> ReadInt(const char* what) {
    T value;
    SF_RETURN_IF_ERROR(Read(&value, sizeof(T), what));
    return value;
  }

  const std::string& path() const { return path_; }

 private:
  struct Close {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  Reader(std::string path, std::FILE* file)
      : path_(std::move(path)), file_(file) {}

  std::string path_;
  std::unique_ptr<std::FILE, Close> file_;
};

}  // namespace

absl::Status SaveParams(const Scope& scope,
                        const std::vector<std::string>& names,
                        const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> writer,
                      AtomicFileWriter::Open(path));
  SF_RETURN_IF_ERROR(writer->Append(absl::string_view(kMagic, kMagicSize)));
  for (const std::string& name : names) {
    const Variable* var = scope.FindVar(name);
    SF_CHECK_CODE(var != nullptr, absl::StatusCode::kNotFound,
                  "cannot save parameter \"%s\": no such variable in the scope",
                  name);
    absl::StatusOr<const Tensor*> tensor = var->Get<Tensor>();
    SF_CHECK_CODE(tensor.ok() && (*tensor)->initialized(),
                  absl::StatusCode::kFailedPrecondition,
                  "cannot save parameter \"%s\": it holds no tensor", name);
    Tensor host = **tensor;
    if (!host.place().is_cpu()) {
      SF_ASSIGN_OR_RETURN(host, host.CopyTo(CPUPlace()));
    }
    TensorProto header;
    header.set_name(name);
    header.set_dtype(host.dtype());
    for (int64_t d : host.dims()) header.add_dims(d);
    const std::string header_bytes = header.SerializeAsString();
    const absl::string_view data(static_cast<const char*>(host.raw_data()),
                                 host.nbytes());
    uint32_t crc = Crc(0, header_bytes.data(), header_bytes.size());
    crc = Crc(crc, data.data(), data.size());
    SF_RETURN_IF_ERROR(writer->Append(LittleEndian(kTensorRecord)));
    SF_RETURN_IF_ERROR(writer->Append(
        LittleEndian(static_cast<uint32_t>(header_bytes.size()))));
    SF_RETURN_IF_ERROR(writer->Append(header_bytes));
    SF_RETURN_IF_ERROR(
        writer->Append(LittleEndian(static_cast<uint64_t>(data.size()))));
    SF_RETURN_IF_ERROR(writer->Append(data));
    SF_RETURN_IF_ERROR(writer->Append(LittleEndian(crc)));
  }
  SF_RETURN_IF_ERROR(writer->Append(LittleEndian(kEndRecord)));
  SF_RETURN_IF_ERROR(
      writer->Append(LittleEndian(static_cast<uint64_t>(names.size()))));
  return writer->Commit();
}

absl::StatusOr<std::vector<std::string>> LoadParams(const std::string& path,
                                                    Scope& scope,
                                                    const Place& place) {
  SF_ASSIGN_OR_RETURN(Reader reader, Reader::Open(path));
  char magic[kMagicSize];
  SF_RETURN_IF_ERROR(reader.Read(magic, kMagicSize, "the magic number"));
  SF_CHECK(std::memcmp(magic, kMagic, kMagicSize) == 0,
           "%s is not a scopeflow parameter file (bad magic number)", path);
  std::vector<std::pair<std::string, Tensor>> loaded;
  while (true) {
    SF_ASSIGN_OR_RETURN(uint32_t kind, reader.ReadInt<uint32_t>("a record"));
    if (kind == kEndRecord) break;
    SF_CHECK_CODE(kind == kTensorRecord, absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: unknown record kind %d after "
                  "%d tensor(s)",
                  path, kind, loaded.size());
    SF_ASSIGN_OR_RETURN(uint32_t header_size,
                        reader.ReadInt<uint32_t>("a tensor header"));
    SF_CHECK_CODE(header_size <= kMaxHeaderSize, absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: tensor header of %d bytes",
                  path, header_size);
    std::string header_bytes(header_size, '\0');
    SF_RETURN_IF_ERROR(
        reader.Read(header_bytes.data(), header_size, "a tensor header"));
    TensorProto header;
    SF_CHECK_CODE(header.ParseFromString(header_bytes),
                  absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: tensor header %d does not "
                  "parse",
                  path, loaded.size());
    SF_ASSIGN_OR_RETURN(uint64_t data_size,
                        reader.ReadInt<uint64_t>("a tensor size"));
    Tensor tensor;
    const absl::Status allocated =
        tensor.Allocate(CPUPlace(), header.dtype(),
                        Dims(header.dims().begin(), header.dims().end()));
    SF_CHECK_CODE(allocated.ok() && tensor.nbytes() == data_size,
                  absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: tensor \"%s\" has %d data "
                  "bytes for %s %s",
                  path, header.name(), data_size, DataTypeName(header.dtype()),
                  DimsToString(tensor.dims()));
    SF_RETURN_IF_ERROR(reader.Read(
        tensor.raw_data(), data_size,
        absl::StrCat("the data of tensor \"", header.name(), "\"").c_str()));
    SF_ASSIGN_OR_RETURN(uint32_t crc, reader.ReadInt<uint32_t>("a checksum"));
    uint32_t expected = Crc(0, header_bytes.data(), header_bytes.size());
    expected = Crc(expected, tensor.raw_data(), data_size);
    SF_CHECK_CODE(crc == expected, absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: checksum mismatch in tensor "
                  "\"%s\"",
                  path, header.name());
    if (!place.is_cpu()) {
      SF_ASSIGN_OR_RETURN(tensor, tensor.CopyTo(place));
    }
    loaded.emplace_back(header.name(), std::move(tensor));
  }
  SF_ASSIGN_OR_RETURN(uint64_t count,
                      reader.ReadInt<uint64_t>("the end record"));
  SF_CHECK_CODE(count == loaded.size(), absl::StatusCode::kDataLoss,
                "parameter file %s is corrupt: it says %d tensor(s), holds %d",
                path, count, loaded.size());
  // Verified: now change the scope.
  std::vector<std::string> names;
  for (auto& [name, tensor] : loaded) {
    SF_ASSIGN_OR_RETURN(Tensor * slot, scope.Var(name)->GetMutable<Tensor>());
    *slot = std::move(tensor);
    names.push_back(name);
  }
  return names;
}

}  // namespace scopeflow
