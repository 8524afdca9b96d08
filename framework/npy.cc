#include "framework/npy.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

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
    {"|i1", kInt8},    {"<i2", kInt16},   {"<u2", kUInt16},  {"<u4", kUInt32},
    {"<u8", kUInt64},
};

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Dims shape;
};

// Reads the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// with exactly the keys numpy writes, each once: a key given twice is an
// error rather than a guess at which one the writer meant.
class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view header)
      : header_(header), rest_(header) {}

  absl::StatusOr<NpyHeader> Parse() {
    NpyHeader parsed;
    SF_RETURN_IF_ERROR(Expect('{'));
    std::vector<std::string> seen;
    while (!Consume('}')) {
      SF_ASSIGN_OR_RETURN(std::string key, String());
      SF_CHECK(std::find(seen.begin(), seen.end(), key) == seen.end(),
               "npy header gives '%s' twice: %s", key, header_);
      seen.push_back(key);
      SF_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr") {
        SF_ASSIGN_OR_RETURN(parsed.descr, String());
      } else if (key == "fortran_order") {
        SF_ASSIGN_OR_RETURN(parsed.fortran_order, Bool());
      } else if (key == "shape") {
        SF_ASSIGN_OR_RETURN(parsed.shape, Tuple());
      } else {
        return Error(absl::StrCat("unknown key '", key, "'"));
      }
      if (!Consume(',')) {
        SF_RETURN_IF_ERROR(Expect('}'));
        break;
      }
    }
    SkipSpace();
    SF_CHECK(rest_.empty(), "npy header has bytes after its dict: %s", header_);
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      SF_CHECK(std::find(seen.begin(), seen.end(), key) != seen.end(),
               "npy header has no '%s': %s", key, header_);
    }
    return parsed;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("npy header: %s at byte %d: %s", what,
                        header_.size() - rest_.size(), header_));
  }

  void SkipSpace() { rest_ = absl::StripLeadingAsciiWhitespace(rest_); }

  bool Consume(char c) {
    SkipSpace();
    if (rest_.empty() || rest_[0] != c) return false;
    rest_.remove_prefix(1);
    return true;
  }

  absl::Status Expect(char c) {
    if (Consume(c)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", std::string(1, c), "'"));
  }

  // A quoted string without escapes (numpy writes none).
  absl::StatusOr<std::string> String() {
    SkipSpace();
    if (rest_.empty() || (rest_[0] != '\'' && rest_[0] != '"')) {
      return Error("expected a quoted string");
    }
    const char quote = rest_[0];
    const size_t close = rest_.find(quote, 1);
    if (close == absl::string_view::npos) return Error("unclosed string");
    std::string value(rest_.substr(1, close - 1));
    if (value.find('\\') != std::string::npos) {
      return Error("escapes in strings are not supported");
    }
    rest_.remove_prefix(close + 1);
    return value;
  }

  absl::StatusOr<bool> Bool() {
    SkipSpace();
    for (const auto& [word, value] :
         {std::pair<absl::string_view, bool>{"True", true}, {"False", false}}) {
      if (absl::ConsumePrefix(&rest_, word)) return value;
    }
    return Error("expected True or False");
  }

  // (), (3,), (2, 3) or (2, 3,).
  absl::StatusOr<Dims> Tuple() {
    SF_RETURN_IF_ERROR(Expect('('));
    Dims dims;
    while (!Consume(')')) {
      SkipSpace();
      const size_t digits = rest_.find_first_not_of("0123456789");
      const absl::string_view number = rest_.substr(0, digits);
      int64_t d = 0;
      if (number.empty() || !absl::SimpleAtoi(number, &d)) {
        return Error("expected a dimension (a non-negative int64)");
      }
      rest_.remove_prefix(number.size());
      dims.push_back(d);
      if (!Consume(',')) {
        SF_RETURN_IF_ERROR(Expect(')'));
        break;
      }
    }
    return dims;
  }

  const absl::string_view header_;
  absl::string_view rest_;
};

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

  SF_ASSIGN_OR_RETURN(NpyHeader parsed, HeaderParser(header).Parse());
  const std::string& descr = parsed.descr;
  DataType dtype = DATA_TYPE_UNSPECIFIED;
  for (const NpyType& type : kNpyTypes) {
    if (descr == type.descr) dtype = type.dtype;
  }
  SF_CHECK(dtype != DATA_TYPE_UNSPECIFIED,
           "npy dtype '%s' is not supported (little-endian float32, float64, "
           "float16, int8, int16, int32, int64, uint8, uint16, uint32, uint64 "
           "and bool are)",
           descr);
  SF_CHECK(!parsed.fortran_order,
           "npy array is in Fortran order; save it in C order "
           "(numpy.ascontiguousarray)");
  const Dims& dims = parsed.shape;
  // The data is all in `bytes`: check its size before allocating, so that
  // a header declaring a huge shape costs nothing.
  uint64_t nbytes = SizeOf(dtype);
  for (int64_t d : dims) {
    SF_CHECK(!__builtin_mul_overflow(nbytes, static_cast<uint64_t>(d), &nbytes),
             "npy shape %s of %s overflows", DimsToString(dims),
             DataTypeName(dtype));
  }
  const absl::string_view data = bytes.substr(header_start + header_len);
  SF_CHECK(data.size() == nbytes, "npy data holds %d bytes; %s of %s needs %d",
           data.size(), DataTypeName(dtype), DimsToString(dims), nbytes);
  Tensor tensor;
  const absl::Status allocated = tensor.Allocate(CPUPlace(), dtype, dims);
  if (allocated.code() == absl::StatusCode::kResourceExhausted) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of memory: cannot allocate %d bytes for npy %s %s: %s", nbytes,
        DataTypeName(dtype), DimsToString(dims), allocated.message()));
  }
  SF_RETURN_IF_ERROR(allocated);
  // An empty tensor has no buffer: memcpy's null pointer is undefined even
  // for 0 bytes (found by tools/fuzz/npy_fuzzer).
  if (nbytes > 0) std::memcpy(tensor.raw_data(), data.data(), nbytes);
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
