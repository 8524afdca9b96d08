// Parameter files that are well formed record by record but wrong as a
// whole: a name twice, bytes after the end, a shape larger than memory.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/param_io.h"
#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"
#include "proto/framework.pb.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

template <typename T>
std::string LittleEndian(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

// A file of the tensors "a" (float32 [2]) and "b" (int64 []).
std::string SavedBytes() {
  Scope scope;
  Tensor* a = *scope.Var("a")->GetMutable<Tensor>();
  EXPECT_TRUE(a->Allocate(CPUPlace(), kFloat32, {2}).ok());
  a->data<float>()[0] = 1;
  a->data<float>()[1] = 2;
  Tensor* b = *scope.Var("b")->GetMutable<Tensor>();
  EXPECT_TRUE(b->Allocate(CPUPlace(), kInt64, {}).ok());
  b->data<int64_t>()[0] = 7;
  const std::string path = TempPath("saved.params");
  EXPECT_TRUE(SaveParams(scope, {"a", "b"}, path).ok());
  return *ReadFile(path);
}

absl::Status Load(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  EXPECT_TRUE(WriteFileAtomically(path, bytes).ok());
  Scope scope;
  absl::Status status = LoadParams(path, scope, CPUPlace()).status();
  // Nothing of a rejected file reaches the scope.
  if (!status.ok()) {
    EXPECT_TRUE(scope.LocalVarNames().empty());
  }
  return status;
}

TEST(ParamIoHostileTest, ADuplicatedNameIsAnErrorNamingIt) {
  const std::string bytes = SavedBytes();
  // magic | record a | record b | end (u32 0, u64 2)
  const std::string records = bytes.substr(8, bytes.size() - 8 - 12);
  const std::string twice = bytes.substr(0, 8) + records + records +
                            LittleEndian<uint32_t>(0) +
                            LittleEndian<uint64_t>(4);
  const absl::Status status = Load("twice.params", twice);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("holds two tensors named \"a\" (tensors 0 and 2)"));
  EXPECT_THAT(status.message(), HasSubstr("twice.params"));
}

TEST(ParamIoHostileTest, BytesAfterTheEndRecordAreAnError) {
  const std::string bytes = SavedBytes();
  EXPECT_TRUE(Load("exact.params", bytes).ok());
  const absl::Status status = Load("joined.params", bytes + bytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(
      status.message(),
      HasSubstr(absl::StrCat(bytes.size(), " byte(s) after its end record")));
  EXPECT_THAT(Load("one_more.params", bytes + "x").message(),
              HasSubstr("1 byte(s) after its end record"));
}

TEST(ParamIoHostileTest, SavingANameTwiceIsAnError) {
  Scope scope;
  ASSERT_TRUE((*scope.Var("a")->GetMutable<Tensor>())
                  ->Allocate(CPUPlace(), kFloat32, {1})
                  .ok());
  const absl::Status status =
      SaveParams(scope, {"a", "a"}, TempPath("dup_save.params"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"a\" twice"));
}

// magic | a record of float32 [2^20, 2^20] = 2^42 bytes, the data absent.
std::string HugeRecordStart(uint64_t data_size) {
  TensorProto header;
  header.set_name("huge");
  header.set_dtype(kFloat32);
  header.add_dims(int64_t{1} << 20);
  header.add_dims(int64_t{1} << 20);
  const std::string header_bytes = header.SerializeAsString();
  return std::string("SFPARAM1", 8) + LittleEndian<uint32_t>(1) +
         LittleEndian<uint32_t>(static_cast<uint32_t>(header_bytes.size())) +
         header_bytes + LittleEndian<uint64_t>(data_size);
}

constexpr uint64_t kHugeBytes = uint64_t{1} << 42;  // 4 TiB

TEST(ParamIoHostileTest, AShapeLargerThanMemoryIsOutOfMemoryWithTheBytes) {
  // The file does hold 4 TiB (sparse: no disk is used), so only memory is
  // missing.
  const std::string path = TempPath("huge.params");
  const std::string start = HugeRecordStart(kHugeBytes);
  ASSERT_TRUE(WriteFileAtomically(path, start).ok());
  ASSERT_EQ(truncate(path.c_str(), start.size() + kHugeBytes + 16), 0);
  Scope scope;
  const absl::Status status = LoadParams(path, scope, CPUPlace()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("out of memory"));
  EXPECT_THAT(status.message(),
              HasSubstr("cannot allocate 4398046511104 bytes"));
  EXPECT_THAT(status.message(),
              HasSubstr("\"huge\" (float32 [1048576, 1048576])"));
  EXPECT_THAT(status.message(), testing::Not(HasSubstr("corrupt")));
}

TEST(ParamIoHostileTest, AShapeLargerThanTheFileIsTruncationNotAnAllocation) {
  const absl::Status status =
      Load("short_huge.params", HugeRecordStart(kHugeBytes) + "tiny");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("is truncated: tensor \"huge\" (float32 [1048576, "
                        "1048576]) needs 4398046511104 bytes, 4 remain"));
}

TEST(ParamIoHostileTest, ASizeThatDoesNotMatchTheShapeIsCorrupt) {
  const absl::Status status =
      Load("mismatch.params", HugeRecordStart(12) + std::string(16, '\0'));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("tensor \"huge\" has 12 data bytes for float32 "
                        "[1048576, 1048576] (4398046511104 bytes)"));
}

}  // namespace
}  // namespace scopeflow
