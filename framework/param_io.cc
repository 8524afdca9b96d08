#include "framework/param_io.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
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
    struct stat info;
    const uint64_t size =
        ::fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode)
            ? static_cast<uint64_t>(info.st_size)
            : UINT64_MAX;  // A pipe, say: its size is not known up front.
    return Reader(path, file, size);
  }

  absl::Status Read(void* data, size_t size, const char* what) {
    if (std::fread(data, 1, size, file_.get()) != size) {
      return absl::DataLossError(absl::StrFormat(
          "parameter file %s is truncated: it ends inside %s", path_, what));
    }
    position_ += size;
    return absl::OkStatus();
  }

  // The bytes after the read ones (UINT64_MAX - read when not known).
  uint64_t remaining() const { return size_ - position_; }

  // Whether anything follows the bytes read.
  bool AtEnd() { return std::fgetc(file_.get()) == EOF; }

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
  Reader(std::string path, std::FILE* file, uint64_t size)
      : path_(std::move(path)), file_(file), size_(size) {}

  std::string path_;
  std::unique_ptr<std::FILE, Close> file_;
  uint64_t size_;
  uint64_t position_ = 0;
};

// The CPU tensor a record of `header` and `data_size` bytes loads into.
// A size that does not match the shape, or more bytes than the file has
// left, is corruption; memory that cannot be had is RESOURCE_EXHAUSTED with
// the bytes asked for (a valid file too large for this machine).
absl::StatusOr<Tensor> AllocateRecord(const Reader& reader,
                                      const TensorProto& header,
                                      uint64_t data_size) {
  const std::string& path = reader.path();
  SF_CHECK_CODE(IsValidDataType(header.dtype()), absl::StatusCode::kDataLoss,
                "parameter file %s is corrupt: tensor \"%s\" has dtype "
                "number %d",
                path, header.name(), static_cast<int>(header.dtype()));
  const Dims dims(header.dims().begin(), header.dims().end());
  uint64_t bytes = SizeOf(header.dtype());
  for (int64_t d : dims) {
    SF_CHECK_CODE(d >= 0 && !__builtin_mul_overflow(
                                bytes, static_cast<uint64_t>(d), &bytes),
                  absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: tensor \"%s\" has shape %s",
                  path, header.name(), DimsToString(dims));
  }
  SF_CHECK_CODE(bytes == data_size, absl::StatusCode::kDataLoss,
                "parameter file %s is corrupt: tensor \"%s\" has %d data "
                "bytes for %s %s (%d bytes)",
                path, header.name(), data_size, DataTypeName(header.dtype()),
                DimsToString(dims), bytes);
  SF_CHECK_CODE(data_size <= reader.remaining(), absl::StatusCode::kDataLoss,
                "parameter file %s is truncated: tensor \"%s\" (%s %s) needs "
                "%d bytes, %d remain",
                path, header.name(), DataTypeName(header.dtype()),
                DimsToString(dims), data_size, reader.remaining());
  Tensor tensor;
  const absl::Status allocated =
      tensor.Allocate(CPUPlace(), header.dtype(), dims);
  if (allocated.code() == absl::StatusCode::kResourceExhausted) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory loading parameter file %s: cannot allocate %d bytes "
        "for tensor \"%s\" (%s %s): %s",
        path, data_size, header.name(), DataTypeName(header.dtype()),
        DimsToString(dims), allocated.message()));
  }
  SF_RETURN_IF_ERROR(allocated);
  return tensor;
}

}  // namespace

absl::Status SaveParams(const Scope& scope,
                        const std::vector<std::string>& names,
                        const std::string& path) {
  std::vector<TensorToSave> tensors;
  for (const std::string& name : names) {
    const Variable* var = scope.FindVar(name);
    SF_CHECK_CODE(var != nullptr, absl::StatusCode::kNotFound,
                  "cannot save parameter \"%s\": no such variable in the scope",
                  name);
    absl::StatusOr<const Tensor*> tensor = var->Get<Tensor>();
    SF_CHECK_CODE(tensor.ok() && (*tensor)->initialized(),
                  absl::StatusCode::kFailedPrecondition,
                  "cannot save parameter \"%s\": it holds no tensor", name);
    tensors.push_back({name, *tensor});
  }
  return SaveTensors(tensors, path);
}

absl::Status SaveTensors(const std::vector<TensorToSave>& tensors,
                         const std::string& path) {
  absl::flat_hash_map<std::string, int> seen;
  for (const TensorToSave& named : tensors) {
    SF_CHECK(seen.emplace(named.name, 0).second,
             "cannot save parameter file %s: \"%s\" twice in the list", path,
             named.name);
  }
  SF_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> writer,
                      AtomicFileWriter::Open(path));
  SF_RETURN_IF_ERROR(writer->Append(absl::string_view(kMagic, kMagicSize)));
  for (const TensorToSave& named : tensors) {
    const std::string& name = named.name;
    Tensor host = *named.tensor;
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
      writer->Append(LittleEndian(static_cast<uint64_t>(tensors.size()))));
  return writer->Commit();
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadParams(
    const std::string& path, const Place& place) {
  SF_ASSIGN_OR_RETURN(Reader reader, Reader::Open(path));
  char magic[kMagicSize];
  SF_RETURN_IF_ERROR(reader.Read(magic, kMagicSize, "the magic number"));
  SF_CHECK(std::memcmp(magic, kMagic, kMagicSize) == 0,
           "%s is not a scopeflow parameter file (bad magic number)", path);
  std::vector<std::pair<std::string, Tensor>> loaded;
  // Name -> its tensor's position in the file.
  absl::flat_hash_map<std::string, int> seen;
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
    const int index = static_cast<int>(loaded.size());
    const auto [first, added] = seen.emplace(header.name(), index);
    SF_CHECK_CODE(added, absl::StatusCode::kDataLoss,
                  "parameter file %s holds two tensors named \"%s\" (tensors "
                  "%d and %d): which one is meant is unknowable",
                  path, header.name(), first->second, index);
    SF_ASSIGN_OR_RETURN(uint64_t data_size,
                        reader.ReadInt<uint64_t>("a tensor size"));
    SF_ASSIGN_OR_RETURN(Tensor tensor,
                        AllocateRecord(reader, header, data_size));
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
    // int4 and the other dtypes of framework/small_types.h are stored one
    // element per byte, as in memory: a byte outside the type's range is
    // no value kernels may see.
    const int64_t invalid = FindInvalidSmallElement(
        header.dtype(), tensor.raw_data(), tensor.numel());
    SF_CHECK_CODE(invalid < 0, absl::StatusCode::kDataLoss,
                  "parameter file %s is corrupt: element %d of tensor \"%s\" "
                  "is byte 0x%02x, no %s value",
                  path, invalid, header.name(),
                  invalid < 0
                      ? 0
                      : static_cast<const uint8_t*>(tensor.raw_data())[invalid],
                  DataTypeName(header.dtype()));
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
  SF_CHECK_CODE(reader.AtEnd(), absl::StatusCode::kDataLoss,
                "parameter file %s has %d byte(s) after its end record (two "
                "files joined, or a damaged one)",
                path, reader.remaining());
  return loaded;
}

absl::StatusOr<std::vector<std::string>> LoadParams(const std::string& path,
                                                    Scope& scope,
                                                    const Place& place) {
  SF_ASSIGN_OR_RETURN(auto loaded, ReadParams(path, place));
  // Verified: now change the scope.
  std::vector<std::string> names;
  for (auto& [name, tensor] : loaded) {
    SF_ASSIGN_OR_RETURN(Tensor * slot, scope.Var(name)->GetMutable<Tensor>());
    *slot = std::move(tensor);
    names.push_back(name);
  }
  return names;
}

absl::Status CheckParamsUsed(const std::vector<std::string>& loaded,
                             const std::vector<const NetDef*>& nets,
                             const std::string& path) {
  absl::flat_hash_set<std::string> known;
  std::vector<std::string> net_names;
  for (const NetDef* net : nets) {
    net_names.push_back(absl::StrCat("\"", net->name(), "\""));
    for (const BlockDef& block : net->blocks()) {
      for (const VarDef& var : block.vars()) known.insert(var.name());
      for (const OpDef& op : block.ops()) {
        for (const OpSlot& slot : op.inputs()) {
          known.insert(slot.vars().begin(), slot.vars().end());
        }
        for (const OpSlot& slot : op.outputs()) {
          known.insert(slot.vars().begin(), slot.vars().end());
        }
      }
    }
  }
  std::vector<std::string> unused;
  for (const std::string& name : loaded) {
    if (!known.contains(name)) unused.push_back(absl::StrCat("\"", name, "\""));
  }
  constexpr size_t kShown = 5;
  const size_t more = unused.size() > kShown ? unused.size() - kShown : 0;
  unused.resize(std::min(unused.size(), kShown));
  SF_CHECK(unused.empty() && more == 0,
           "parameter file %s holds %s%s, which net %s does not have (the "
           "parameters of another model, or of a renamed variable?); pass "
           "--allow_unused_params to load it anyway",
           path, absl::StrJoin(unused, ", "),
           more > 0 ? absl::StrCat(" and ", more, " more") : "",
           absl::StrJoin(net_names, " or "));
  return absl::OkStatus();
}

}  // namespace scopeflow
