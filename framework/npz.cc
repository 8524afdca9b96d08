#include "framework/npz.h"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/npy.h"
#include "platform/file.h"
#include "platform/status_macros.h"

namespace scopeflow {
namespace {

// Record signatures and fields of the zip format (PKWARE's APPNOTE.TXT).
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentral = 0x06054b50;
constexpr uint32_t kZip64EndOfCentral = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kStored = 0;
constexpr uint16_t kDeflated = 8;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndOfCentralSize = 22;
// Version 2.0: what plain stored and deflated members need.
constexpr uint16_t kVersion = 20;
// 1980-01-01 00:00, the earliest DOS date: archives written from the same
// tensors are the same bytes.
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;

void Put16(std::string& out, uint16_t value) {
  out += static_cast<char>(value & 0xff);
  out += static_cast<char>(value >> 8);
}
void Put32(std::string& out, uint32_t value) {
  Put16(out, static_cast<uint16_t>(value & 0xffff));
  Put16(out, static_cast<uint16_t>(value >> 16));
}

uint64_t Get(absl::string_view bytes, size_t at, int size) {
  uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
  }
  return value;
}

uint32_t Crc32(absl::string_view data) {
  return static_cast<uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

// One member as the central directory describes it.
struct Member {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

// Replaces the 32-bit fields saturated at 0xffffffff by their values in the
// zip64 extra field, in the order the format gives them.
absl::Status ApplyZip64Extra(absl::string_view extra, Member& member,
                             const std::string& what) {
  for (size_t at = 0; at + 4 <= extra.size();) {
    const uint16_t id = Get(extra, at, 2);
    const uint16_t size = Get(extra, at + 2, 2);
    SF_CHECK(at + 4 + size <= extra.size(),
             "%s: member \"%s\" has a malformed extra field", what,
             member.name);
    if (id == kZip64ExtraId) {
      size_t field = at + 4;
      const size_t end = field + size;
      for (uint64_t* value :
           {&member.size, &member.compressed_size, &member.local_offset}) {
        if (*value != 0xffffffffu) continue;
        SF_CHECK(field + 8 <= end,
                 "%s: member \"%s\" has a short zip64 extra field", what,
                 member.name);
        *value = Get(extra, field, 8);
        field += 8;
      }
    }
    at += 4 + size;
  }
  return absl::OkStatus();
}

// Where the central directory starts and how many members it lists.
absl::Status FindCentralDirectory(absl::string_view bytes,
                                  const std::string& what, uint64_t& offset,
                                  uint64_t& count) {
  SF_CHECK(bytes.size() >= kEndOfCentralSize,
           "%s is not a zip archive (npz): too short", what);
  // The end record is last, after a comment of up to 64 KiB.
  size_t at = bytes.size() - kEndOfCentralSize;
  const size_t lowest = bytes.size() > kEndOfCentralSize + 0xffff
                            ? bytes.size() - kEndOfCentralSize - 0xffff
                            : 0;
  while (Get(bytes, at, 4) != kEndOfCentral) {
    SF_CHECK(at > lowest,
             "%s is not a zip archive (npz): no end of central directory",
             what);
    --at;
  }
  count = Get(bytes, at + 10, 2);
  offset = Get(bytes, at + 16, 4);
  if ((count == 0xffff || offset == 0xffffffffu) && at >= 20 &&
      Get(bytes, at - 20, 4) == kZip64Locator) {
    const uint64_t zip64_end = Get(bytes, at - 20 + 8, 8);
    SF_CHECK(zip64_end + 56 <= bytes.size() &&
                 Get(bytes, zip64_end, 4) == kZip64EndOfCentral,
             "%s: the zip64 end of central directory is missing", what);
    count = Get(bytes, zip64_end + 32, 8);
    offset = Get(bytes, zip64_end + 48, 8);
  }
  SF_CHECK(offset <= bytes.size(),
           "%s is corrupt: its central directory lies past its end", what);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Inflate(absl::string_view compressed, uint64_t size,
                                    const std::string& where) {
  std::string out(size, '\0');
  z_stream stream{};
  SF_CHECK(inflateInit2(&stream, -MAX_WBITS) == Z_OK,
           "%s: zlib cannot start inflating", where);
  stream.next_in =
      reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = inflate(&stream, Z_FINISH);
  const uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  SF_CHECK(result == Z_STREAM_END && produced == size,
           "%s: the deflated data is corrupt (zlib: %d, %d of %d bytes)", where,
           result, produced, size);
  return out;
}

}  // namespace

absl::StatusOr<NamedTensors> ParseNpz(absl::string_view bytes,
                                      const std::string& what) {
  uint64_t offset = 0, count = 0;
  SF_RETURN_IF_ERROR(FindCentralDirectory(bytes, what, offset, count));
  NamedTensors tensors;
  size_t at = offset;
  for (uint64_t i = 0; i < count; ++i) {
    SF_CHECK(at + kCentralHeaderSize <= bytes.size() &&
                 Get(bytes, at, 4) == kCentralHeader,
             "%s is corrupt: central directory entry %d is missing", what, i);
    Member member;
    member.method = Get(bytes, at + 10, 2);
    member.crc = Get(bytes, at + 16, 4);
    member.compressed_size = Get(bytes, at + 20, 4);
    member.size = Get(bytes, at + 24, 4);
    const size_t name_size = Get(bytes, at + 28, 2);
    const size_t extra_size = Get(bytes, at + 30, 2);
    const size_t comment_size = Get(bytes, at + 32, 2);
    member.local_offset = Get(bytes, at + 42, 4);
    SF_CHECK(at + kCentralHeaderSize + name_size + extra_size + comment_size <=
                 bytes.size(),
             "%s is corrupt: central directory entry %d runs past the end",
             what, i);
    member.name = std::string(bytes.substr(at + kCentralHeaderSize, name_size));
    SF_RETURN_IF_ERROR(ApplyZip64Extra(
        bytes.substr(at + kCentralHeaderSize + name_size, extra_size), member,
        what));
    at += kCentralHeaderSize + name_size + extra_size + comment_size;

    const std::string where =
        absl::StrCat(what, ": member \"", member.name, "\"");
    SF_CHECK(absl::EndsWith(member.name, ".npy"),
             "%s is not an .npy file (an npz holds NAME.npy members)", where);
    SF_CHECK(member.method == kStored || member.method == kDeflated,
             "%s uses compression method %d; only stored (0) and deflated "
             "(8) are read",
             where, member.method);
    const uint64_t local = member.local_offset;
    SF_CHECK(local + kLocalHeaderSize <= bytes.size() &&
                 Get(bytes, local, 4) == kLocalHeader,
             "%s is corrupt: no local header at offset %d", where, local);
    const uint64_t data_start = local + kLocalHeaderSize +
                                Get(bytes, local + 26, 2) +
                                Get(bytes, local + 28, 2);
    SF_CHECK(data_start + member.compressed_size <= bytes.size(),
             "%s is truncated: its data runs past the end of the archive",
             where);
    absl::string_view stored = bytes.substr(data_start, member.compressed_size);
    std::string inflated;
    if (member.method == kDeflated) {
      SF_ASSIGN_OR_RETURN(inflated, Inflate(stored, member.size, where));
      stored = inflated;
    } else {
      SF_CHECK(member.size == member.compressed_size,
               "%s is corrupt: stored with %d bytes for a size of %d", where,
               member.compressed_size, member.size);
    }
    SF_CHECK(Crc32(stored) == member.crc, "%s is corrupt: CRC-32 mismatch",
             where);
    absl::StatusOr<Tensor> tensor = ParseNpy(stored);
    if (!tensor.ok()) {
      return absl::Status(tensor.status().code(),
                          absl::StrCat(where, ": ", tensor.status().message()));
    }
    tensors.emplace_back(member.name.substr(0, member.name.size() - 4),
                         *std::move(tensor));
  }
  return tensors;
}

absl::StatusOr<NamedTensors> ReadNpz(const std::string& path) {
  SF_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseNpz(bytes, path);
}

absl::StatusOr<std::string> SerializeNpz(const NamedTensors& tensors) {
  constexpr uint64_t kMax32 = std::numeric_limits<uint32_t>::max();
  std::string archive;
  std::string central;
  for (const auto& [name, tensor] : tensors) {
    SF_ASSIGN_OR_RETURN(const std::string npy, SerializeNpy(tensor));
    const std::string member = name + ".npy";
    SF_CHECK(member.size() <= 0xffff, "npz: the name \"%s\" is too long", name);
    SF_CHECK(npy.size() < kMax32 && archive.size() < kMax32,
             "npz: tensor \"%s\" would put the archive over 4 GiB, which "
             "needs zip64 (not written)",
             name);
    const uint32_t crc = Crc32(npy);
    const uint32_t local_offset = static_cast<uint32_t>(archive.size());
    // The fields a local header shares with the central directory entry,
    // from "version needed" to the name's length.
    std::string common;
    Put16(common, kVersion);
    Put16(common, 0);  // flags
    Put16(common, kStored);
    Put16(common, 0);  // time
    Put16(common, kDosDate);
    Put32(common, crc);
    Put32(common, static_cast<uint32_t>(npy.size()));
    Put32(common, static_cast<uint32_t>(npy.size()));
    Put16(common, static_cast<uint16_t>(member.size()));

    Put32(archive, kLocalHeader);
    archive += common;
    Put16(archive, 0);  // extra field length
    archive += member;
    archive += npy;

    Put32(central, kCentralHeader);
    Put16(central, kVersion);  // made by
    central += common;
    Put16(central, 0);  // extra field length
    Put16(central, 0);  // comment length
    Put16(central, 0);  // disk number
    Put16(central, 0);  // internal attributes
    Put32(central, 0);  // external attributes
    Put32(central, local_offset);
    central += member;
  }
  SF_CHECK(tensors.size() < 0xffff && archive.size() + central.size() < kMax32,
           "npz: %d tensors of %d bytes need zip64 (not written)",
           tensors.size(), archive.size());
  const uint32_t central_offset = static_cast<uint32_t>(archive.size());
  archive += central;
  Put32(archive, kEndOfCentral);
  Put16(archive, 0);  // this disk
  Put16(archive, 0);  // the central directory's disk
  Put16(archive, static_cast<uint16_t>(tensors.size()));
  Put16(archive, static_cast<uint16_t>(tensors.size()));
  Put32(archive, static_cast<uint32_t>(central.size()));
  Put32(archive, central_offset);
  Put16(archive, 0);  // comment length
  return archive;
}

absl::Status WriteNpz(const std::string& path, const NamedTensors& tensors) {
  SF_ASSIGN_OR_RETURN(const std::string bytes, SerializeNpz(tensors));
  return WriteFileAtomically(path, bytes);
}

}  // namespace scopeflow
