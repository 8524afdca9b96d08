#include "framework/param_io.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "framework/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

void Fill(Scope& scope, const std::string& name, DataType dtype, Dims dims,
          float start) {
  Tensor* t = *scope.Var(name)->GetMutable<Tensor>();
  ASSERT_TRUE(t->Allocate(CPUPlace(), dtype, dims).ok());
  for (int64_t i = 0; i < t->numel(); ++i) {
    if (dtype == kFloat32) t->data<float>()[i] = start + i;
    if (dtype == kInt64)
      t->data<int64_t>()[i] = static_cast<int64_t>(start) + i;
  }
}

class ParamIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Fill(scope_, "w", kFloat32, {3, 4}, 0.5f);
    Fill(scope_, "step", kInt64, {}, 41);
    path_ = TempPath("params.bin");
    ASSERT_TRUE(SaveParams(scope_, {"w", "step"}, path_).ok());
  }

  Scope scope_;
  std::string path_;
};

TEST_F(ParamIoTest, RoundTrip) {
  Scope loaded;
  absl::StatusOr<std::vector<std::string>> names =
      LoadParams(path_, loaded, CPUPlace());
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("w", "step"));
  const Tensor* w = *loaded.FindVar("w")->Get<Tensor>();
  EXPECT_THAT(w->dims(), ElementsAre(3, 4));
  EXPECT_EQ(w->data<float>()[11], 11.5f);
  const Tensor* step = *loaded.FindVar("step")->Get<Tensor>();
  EXPECT_EQ(step->rank(), 0);
  EXPECT_EQ(step->data<int64_t>()[0], 41);
}

TEST_F(ParamIoTest, TruncationAnywhereIsDetectedAndChangesNothing) {
  const std::string bytes = *ReadFile(path_);
  for (size_t size : {size_t{0}, size_t{5}, size_t{12}, bytes.size() / 2,
                      bytes.size() - 9, bytes.size() - 1}) {
    const std::string cut = TempPath("cut.bin");
    ASSERT_TRUE(WriteFileAtomically(cut, bytes.substr(0, size)).ok());
    Scope target;
    target.Var("w");
    absl::StatusOr<std::vector<std::string>> names =
        LoadParams(cut, target, CPUPlace());
    ASSERT_FALSE(names.ok()) << size;
    EXPECT_THAT(names.status().message(), HasSubstr("cut.bin"));
    EXPECT_FALSE(target.FindVar("w")->IsInitialized()) << size;
    EXPECT_EQ(target.FindVar("step"), nullptr);
  }
}

TEST_F(ParamIoTest, AnAlteredByteFailsTheChecksum) {
  std::string bytes = *ReadFile(path_);
  bytes[bytes.size() / 2] ^= 0x10;  // Inside w's data.
  const std::string altered = TempPath("altered.bin");
  ASSERT_TRUE(WriteFileAtomically(altered, bytes).ok());
  Scope target;
  absl::StatusOr<std::vector<std::string>> names =
      LoadParams(altered, target, CPUPlace());
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(names.status().message(),
              HasSubstr("checksum mismatch in tensor \"w\""));
}

TEST_F(ParamIoTest, NotAParameterFile) {
  const std::string other = TempPath("other.bin");
  ASSERT_TRUE(WriteFileAtomically(other, "format_version: 1\n").ok());
  Scope target;
  EXPECT_THAT(LoadParams(other, target, CPUPlace()).status().message(),
              HasSubstr("not a scopeflow parameter file"));
  EXPECT_EQ(LoadParams(TempPath("absent"), target, CPUPlace()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ParamIoTest, FailedSaveKeepsTheOldFile) {
  const std::string before = *ReadFile(path_);
  absl::Status status = SaveParams(scope_, {"w", "missing"}, path_);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("\"missing\""));
  EXPECT_EQ(*ReadFile(path_), before);
  scope_.Var("empty");
  EXPECT_THAT(SaveParams(scope_, {"empty"}, path_).message(),
              HasSubstr("holds no tensor"));
  EXPECT_EQ(*ReadFile(path_), before);
}

}  // namespace
}  // namespace scopeflow

namespace scopeflow {
namespace {

// int4 and the other types of framework/small_types.h: a byte an element in
// the file as in memory, so odd counts need no padding; a byte outside the
// type's range is refused by name.
TEST(ParamIoSmallTypesTest, RoundTripAndOutOfRangeBytes) {
  Scope scope;
  const std::vector<int8_t> int4 = {-8, 7, -1};
  const std::vector<uint8_t> uint2 = {3, 0, 1, 2, 3};
  Tensor* a = *scope.Var("a")->GetMutable<Tensor>();
  ASSERT_TRUE(a->Allocate(CPUPlace(), kInt4, {3}).ok());
  for (int i = 0; i < 3; ++i) a->data<qint4>()[i].value = int4[i];
  Tensor* b = *scope.Var("b")->GetMutable<Tensor>();
  ASSERT_TRUE(b->Allocate(CPUPlace(), kUInt2, {5}).ok());
  for (int i = 0; i < 5; ++i) b->data<quint2>()[i].value = uint2[i];
  Tensor* c = *scope.Var("c")->GetMutable<Tensor>();
  ASSERT_TRUE(c->Allocate(CPUPlace(), kFloat8E8M0, {1}).ok());
  c->data<float8_e8m0>()[0].bits = 0xff;
  const std::string path = TempPath("small.params");
  ASSERT_TRUE(SaveParams(scope, {"a", "b", "c"}, path).ok());
  Scope loaded;
  ASSERT_TRUE(LoadParams(path, loaded, CPUPlace()).ok());
  const Tensor* la = *loaded.FindVar("a")->Get<Tensor>();
  ASSERT_EQ(la->dtype(), kInt4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(la->data<qint4>()[i].value, int4[i]);
  const Tensor* lb = *loaded.FindVar("b")->Get<Tensor>();
  ASSERT_EQ(lb->dtype(), kUInt2);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(lb->data<quint2>()[i].value, uint2[i]);
  EXPECT_EQ((*loaded.FindVar("c")->Get<Tensor>())->data<float8_e8m0>()[0].bits,
            0xff);

  // 8 is no int4 (whose bytes hold -8 to 7).
  a->data<qint4>()[1].value = 8;
  const std::string bad = TempPath("bad_small.params");
  ASSERT_TRUE(SaveParams(scope, {"a"}, bad).ok());
  Scope rejected;
  const absl::Status status = LoadParams(bad, rejected, CPUPlace()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(),
              HasSubstr("is corrupt: element 1 of tensor \"a\" is byte 0x08, "
                        "no int4 value"));
}

}  // namespace
}  // namespace scopeflow
