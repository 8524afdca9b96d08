#include "framework/npy.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An .npy file laid out by the format's specification (version 1.0): magic,
// version, little-endian header length, the header dict padded with spaces
// and ended by a newline so the data starts at a multiple of 64, then data.
std::string NpyFile(const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += "\n";
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size() & 0xff));
  file.push_back(static_cast<char>(header.size() >> 8));
  return file + header + data;
}

std::string Bytes(const void* data, size_t size) {
  return std::string(static_cast<const char*>(data), size);
}

TEST(NpyTest, ParsesWhatNumpyWrites) {
  const float values[] = {1.5f, -2, 3, 4, 5, 6};
  absl::StatusOr<Tensor> tensor = ParseNpy(
      NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              Bytes(values, sizeof(values))));
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), kFloat32);
  EXPECT_THAT(tensor->dims(), ElementsAre(2, 3));
  EXPECT_EQ(tensor->data<float>()[0], 1.5f);
  EXPECT_EQ(tensor->data<float>()[5], 6.0f);

  const int64_t scalar = -7;
  absl::StatusOr<Tensor> zero_d = ParseNpy(
      NpyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
              Bytes(&scalar, 8)));
  ASSERT_TRUE(zero_d.ok());
  EXPECT_EQ(zero_d->rank(), 0);
  EXPECT_EQ(zero_d->data<int64_t>()[0], -7);

  const bool flags[] = {true, false, true};
  absl::StatusOr<Tensor> one_d = ParseNpy(
      NpyFile("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
              Bytes(flags, 3)));
  ASSERT_TRUE(one_d.ok());
  EXPECT_THAT(one_d->dims(), ElementsAre(3));
}

TEST(NpyTest, RoundTripThroughAFile) {
  Tensor tensor;
  ASSERT_TRUE(tensor.Allocate(CPUPlace(), kInt32, {2, 2, 1}).ok());
  for (int i = 0; i < 4; ++i) tensor.data<int32_t>()[i] = i * 10;
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/t.npy";
  ASSERT_TRUE(WriteNpy(path, tensor).ok());
  absl::StatusOr<Tensor> back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->dims(), ElementsAre(2, 2, 1));
  EXPECT_EQ(back->data<int32_t>()[3], 30);
  absl::StatusOr<std::string> bytes = SerializeNpy(tensor);
  EXPECT_THAT(*bytes, HasSubstr("'shape': (2, 2, 1)"));
  EXPECT_EQ((bytes->size() - 16) % 16, 0);
}

TEST(NpyTest, Int8RoundTrips) {
  const int8_t values[] = {-128, -1, 0, 127};
  absl::StatusOr<Tensor> tensor = ParseNpy(
      NpyFile("{'descr': '|i1', 'fortran_order': False, 'shape': (4,), }",
              Bytes(values, sizeof(values))));
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), kInt8);
  EXPECT_EQ(tensor->data<int8_t>()[0], -128);
  EXPECT_EQ(tensor->data<int8_t>()[3], 127);
  absl::StatusOr<std::string> bytes = SerializeNpy(*tensor);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_THAT(*bytes, HasSubstr("'descr': '|i1'"));
  absl::StatusOr<Tensor> back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->data<int8_t>()[1], -1);
}

TEST(NpyTest, WiderIntegersRoundTrip) {
  const uint64_t values[] = {0, 18446744073709551615u};
  absl::StatusOr<Tensor> tensor = ParseNpy(
      NpyFile("{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }",
              Bytes(values, sizeof(values))));
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->dtype(), kUInt64);
  EXPECT_EQ(tensor->data<uint64_t>()[1], 18446744073709551615u);
  const int16_t shorts[] = {-32768, 7};
  absl::StatusOr<Tensor> i16 = ParseNpy(
      NpyFile("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
              Bytes(shorts, sizeof(shorts))));
  ASSERT_TRUE(i16.ok()) << i16.status();
  EXPECT_EQ(i16->dtype(), kInt16);
  EXPECT_EQ(i16->data<int16_t>()[0], -32768);
  absl::StatusOr<std::string> short_bytes = SerializeNpy(*i16);
  ASSERT_TRUE(short_bytes.ok()) << short_bytes.status();
  EXPECT_THAT(*short_bytes, HasSubstr("'descr': '<i2'"));
  absl::StatusOr<std::string> bytes = SerializeNpy(*tensor);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_THAT(*bytes, HasSubstr("'descr': '<u8'"));
}

TEST(NpyTest, Errors) {
  EXPECT_THAT(ParseNpy("PK\x03\x04 not npy").status().message(),
              HasSubstr("not an npy file"));
  const float one = 1;
  EXPECT_THAT(
      ParseNpy(
          NpyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                  Bytes(&one, 4)))
          .status()
          .message(),
      HasSubstr("npy dtype '>f4' is not supported"));
  EXPECT_THAT(
      ParseNpy(
          NpyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                  Bytes(&one, 4)))
          .status()
          .message(),
      HasSubstr("Fortran order"));
  EXPECT_THAT(
      ParseNpy(
          NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                  Bytes(&one, 4)))
          .status()
          .message(),
      HasSubstr("npy data holds 4 bytes; float32 of [3] needs 12"));
  EXPECT_THAT(ReadNpy("/nonexistent/x.npy").status().message(),
              HasSubstr("/nonexistent/x.npy"));
}

TEST(NpyTest, EmptyArraysRoundTrip) {
  absl::StatusOr<Tensor> empty = ParseNpy(NpyFile(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", ""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(empty->dims(), ElementsAre(0, 3));
  absl::StatusOr<std::string> bytes = SerializeNpy(*empty);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Tensor> again = ParseNpy(*bytes);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->dims(), ElementsAre(0, 3));
}

TEST(NpyTest, HeaderKeysAreCheckedOneByOne) {
  const float one = 1;
  // Double quotes and no trailing comma: a valid Python dict all the same.
  EXPECT_TRUE(ParseNpy(NpyFile("{\"descr\": '<f4', 'fortran_order': False, "
                               "\"shape\": (1,)}",
                               Bytes(&one, 4)))
                  .ok());
  // A key given twice is an error naming it (Python would keep the last,
  // a search for the key the first).
  absl::Status twice =
      ParseNpy(NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                       "(1,), 'shape': (1000000, 1000000), }",
                       Bytes(&one, 4)))
          .status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("npy header gives 'shape' twice"));
  EXPECT_THAT(
      ParseNpy(NpyFile("{'descr': '<f4', 'descr': '<i4', 'fortran_order': "
                       "False, 'shape': (1,), }",
                       Bytes(&one, 4)))
          .status()
          .message(),
      HasSubstr("gives 'descr' twice"));
  EXPECT_THAT(ParseNpy(NpyFile("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (1,), 'extra': 1, }",
                               Bytes(&one, 4)))
                  .status()
                  .message(),
              HasSubstr("unknown key 'extra'"));
  EXPECT_THAT(
      ParseNpy(NpyFile("{'descr': '<f4', 'shape': (1,), }", Bytes(&one, 4)))
          .status()
          .message(),
      HasSubstr("npy header has no 'fortran_order'"));
  EXPECT_THAT(ParseNpy(NpyFile("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (1,), } junk",
                               Bytes(&one, 4)))
                  .status()
                  .message(),
              HasSubstr("bytes after its dict"));
  EXPECT_THAT(ParseNpy(NpyFile("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (-1,), }",
                               Bytes(&one, 4)))
                  .status()
                  .message(),
              HasSubstr("expected a dimension"));
}

TEST(NpyTest, DataMustMatchTheShapeExactly) {
  const float two[] = {1, 2};
  EXPECT_THAT(
      ParseNpy(
          NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                  Bytes(two, 8)))
          .status()
          .message(),
      HasSubstr("npy data holds 8 bytes; float32 of [1] needs 4"));
  // A huge declared shape is refused by its size, before any allocation.
  EXPECT_THAT(ParseNpy(NpyFile("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (1099511627776, 1024), }",
                               Bytes(two, 8)))
                  .status()
                  .message(),
              HasSubstr("needs 9007199254740992"));
  EXPECT_THAT(ParseNpy(NpyFile("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (4294967296, 4294967296), }",
                               Bytes(two, 8)))
                  .status()
                  .message(),
              HasSubstr("overflows"));
}

}  // namespace
}  // namespace scopeflow
