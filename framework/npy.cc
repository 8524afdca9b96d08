#include "framework/npy.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "platform/device.h"
#include "platform/file.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct NpyType {
  const char* descr;
  DataType dtype;
};

constexpr NpyType kNpyTypes[] = {
    {"<f4", kFloat32}, {"<f8", kFloat64}, {"<f2", kFloat16}, {"<i4", kInt32},
    {"<i8", kInt64},   {"|u1", kUInt8},   {"|b1", kBool},
    {"|i1", kInt8},
};

// The value of `key` in the header dict, e.g. "'<f4'" or "(2, 3)".
absl::StatusOr<absl::string_view> HeaderValue(absl::string_view header,
                                              absl::string_view key) {
  const std::string quoted = absl::StrCat("'", key, "':");
  const size_t at = header.find(quoted);
  SF_CHECK(at != absl::string_view::npos, "npy header has no '%s': %s", key,
           header);
  absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(header.substr(at + quoted.size()));
  size_t end = 0;
  if (absl::StartsWith(rest, "(")) {
    end = rest.find(')');
    SF_CHECK(end != absl::string_view::npos, "npy header: unclosed shape");
    return rest.substr(0, end + 1);
  }
  end = rest.find_first_of(",}");
  return absl::StripTrailingAsciiWhitespace(rest.substr(0, end));
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes) {
  SF_CHECK(bytes.size() >= 10 && bytes.substr(0, kMagicSize) ==
                                     absl::string_view(kMagic, kMagicSize),
           "not an npy file: it does not start with \\x93NUMPY");
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) |
                 (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else {
    SF_CHECK(major == 2 || major == 3, "npy version %d is not supported",
             major);
    SF_CHECK(bytes.size() >= 12, "npy file truncated in its header");
    for (int i = 0; i < 4; ++i) {
      header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                    << (8 * i);
    }
    header_start = 12;
  }
  SF_CHECK(bytes.size() >= header_start + header_len,
           "npy file truncated in its header");
  const absl::string_view header = bytes.substr(header_start, header_len);

  SF_ASSIGN_OR_RETURN(absl::string_view descr, HeaderValue(header, "descr"));
  descr = absl::StripSuffix(absl::StripPrefix(descr, "'"), "'");
  DataType dtype = DATA_TYPE_UNSPECIFIED;
  for (const NpyType& type : kNpyTypes) {
    if (descr == type.descr) dtype = type.dtype;
  }
  SF_CHECK(dtype != DATA_TYPE_UNSPECIFIED,
           "npy dtype '%s' is not supported (little-endian float32, float64, "
           "float16, int32, int64, uint8, int8 and bool are)",
           descr);
  SF_ASSIGN_OR_RETURN(absl::string_view order,
                      HeaderValue(header, "fortran_order"));
  SF_CHECK(order == "False",
           "npy array is in Fortran order; save it in C order "
           "(numpy.ascontiguousarray)");
  SF_ASSIGN_OR_RETURN(absl::string_view shape, HeaderValue(header, "shape"));
  shape = absl::StripSuffix(absl::StripPrefix(shape, "("), ")");
  Dims dims;
  for (absl::string_view part : absl::StrSplit(shape, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    int64_t d = 0;
    SF_CHECK(absl::SimpleAtoi(part, &d) && d >= 0,
             "npy shape has a bad dimension \"%s\"", part);
    dims.push_back(d);
  }
  Tensor tensor;
  SF_RETURN_IF_ERROR(tensor.Allocate(CPUPlace(), dtype, dims));
  const absl::string_view data = bytes.substr(header_start + header_len);
  SF_CHECK(data.size() >= tensor.nbytes(),
           "npy data holds %d bytes; %s of %s needs %d", data.size(),
           DataTypeName(dtype), DimsToString(dims), tensor.nbytes());
  std::memcpy(tensor.raw_data(), data.data(), tensor.nbytes());
  return tensor;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  absl::StatusOr<Tensor> tensor = ParseNpy(bytes);
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        absl::StrCat(path, ": ", tensor.status().message()));
  }
  return tensor;
}

absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  const char* descr = nullptr;
  for (const NpyType& type : kNpyTypes) {
    if (type.dtype == tensor.dtype()) descr = type.descr;
  }
  SF_CHECK(descr != nullptr, "cannot write %s as npy", tensor.DebugString());
  std::string shape;
  for (int64_t d : tensor.dims()) absl::StrAppend(&shape, d, ", ");
  if (tensor.rank() > 1) shape.resize(shape.size() - 2);   // (2, 3)
  if (tensor.rank() == 1) shape.resize(shape.size() - 1);  // (2,)
  std::string header = absl::StrFormat(
      "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  // Pad with spaces so the data starts at a multiple of 64 bytes.
  const size_t unpadded = kMagicSize + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes(kMagic, kMagicSize);
  bytes.push_back('\x01');
  bytes.push_back('\x00');
  bytes.push_back(static_cast<char>(header.size() & 0xff));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  const size_t data_start = bytes.size();
  bytes.resize(data_start + tensor.nbytes());
  SF_RETURN_IF_ERROR(CopyBytes(CPUPlace(), bytes.data() + data_start,
                               tensor.place(), tensor.raw_data(),
                               tensor.nbytes()));
  return bytes;
}

absl::Status WriteNpy(const std::string& path, const Tensor& tensor) {
  SF_ASSIGN_OR_RETURN(std::string bytes, SerializeNpy(tensor));
  return WriteFileAtomically(path, bytes);
}

}  // namespace scopeflow
