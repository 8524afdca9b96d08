// Tensors kept in external files (data_location EXTERNAL): read relative to
// the model's directory by ReadOnnxModel, refused when they lead outside it.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "framework/onnx/onnx_importer.h"
#include "framework/onnx/onnx_test_models.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace onnx_testing;  // NOLINT: the model builders.

// A fresh directory for one test.
fs::path TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(tmp != nullptr ? tmp : ".") / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string FloatBytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()),
                     values.size() * sizeof(float));
}

// A FLOAT initializer whose data lies at `location`.
onnx::TensorProto ExternalFloats(const std::string& name,
                                 const std::vector<int64_t>& dims,
                                 const std::string& location,
                                 const std::string& offset,
                                 const std::string& length) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) proto.add_dims(d);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    onnx::StringStringEntryProto* entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
  return proto;
}

// y = x + w, w external; written as dir/model.onnx.
fs::path WriteModel(const fs::path& dir, onnx::TensorProto w) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddInitializer(model, std::move(w));
  AddNode(model, "Add", {"x", "w"}, {"y"});
  AddOutput(model, "y");
  const fs::path path = dir / "model.onnx";
  WriteBytes(path, model.SerializeAsString());
  return path;
}

absl::StatusOr<std::vector<float>> ReadAndRun(const fs::path& path) {
  absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(path.string());
  if (!model.ok()) return model.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
  if (!imported.ok()) return imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", MakeTensor<float>({2}, {10, 20})}});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

TEST(ExternalDataTest, ReadsOffsetAndLengthRelativeToTheModel) {
  const fs::path dir = TestDir("offset");
  fs::create_directories(dir / "data");
  WriteBytes(dir / "data" / "weights.bin",
             "12345678" + FloatBytes({1, 2}) + "trailing");
  absl::StatusOr<std::vector<float>> y = ReadAndRun(
      WriteModel(dir, ExternalFloats("w", {2}, "data/weights.bin", "8", "8")));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ElementsAre(11, 22));

  // Without a length, to the end of the file.
  WriteBytes(dir / "tail.bin", "1234" + FloatBytes({3, 4}));
  y = ReadAndRun(
      WriteModel(dir, ExternalFloats("w", {2}, "./tail.bin", "4", "")));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(*y, ElementsAre(13, 24));
}

// Written by Debian's python3-onnx 1.12:
//   onnx.save_model(model, "model.onnx", save_as_external_data=True,
//                   all_tensors_to_one_file=True, location="weights.bin",
//                   size_threshold=0)
// for y = x W + B at opset 9, W = [[0, 0.5], [1, 1.5], [2, 2.5]],
// B = [1, -1]. Copied out of the runfiles, whose files are links.
TEST(ExternalDataTest, ReadsAModelOnnxSaved) {
  const fs::path dir = TestDir("onnx_saved");
  const fs::path source = "framework/onnx/testdata/external_data";
  for (const char* name : {"model.onnx", "weights.bin"}) {
    fs::copy_file(source / name, dir / name);
  }
  absl::StatusOr<onnx::ModelProto> model =
      ReadOnnxModel((dir / "model.onnx").string());
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnx(*model);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::vector<Tensor>> out =
      RunNet(*imported, {{"x", MakeTensor<float>({1, 3}, {1, 2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(9, 10));
}

// Through runfiles' links the data lies beside the model's real path.
TEST(ExternalDataTest, FollowsALinkedModelToItsData) {
  absl::StatusOr<onnx::ModelProto> model =
      ReadOnnxModel("framework/onnx/testdata/external_data/model.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(ImportOnnx(*model).ok());
}

TEST(ExternalDataTest, RefusesLocationsOutsideTheModelsDirectory) {
  const fs::path root = TestDir("escape");
  const fs::path dir = root / "model";
  fs::create_directories(dir);
  WriteBytes(root / "outside.bin", FloatBytes({1, 2}));
  fs::create_symlink(root / "outside.bin", dir / "link.bin");
  struct Case {
    std::string location;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"../outside.bin", "leads outside the model's directory"},
      {"sub/../../outside.bin", "leads outside the model's directory"},
      {(root / "outside.bin").string(), "is an absolute path"},
      {"link.bin", "through a symbolic link"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.location);
    absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(
        WriteModel(dir, ExternalFloats("w", {2}, c.location, "", ""))
            .string());
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(model.status().message()),
                HasSubstr("tensor \"w\": external data location"));
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(c.error));
  }
}

TEST(ExternalDataTest, BadRangesAndMissingFiles) {
  const fs::path dir = TestDir("ranges");
  WriteBytes(dir / "weights.bin", FloatBytes({1, 2}));
  struct Case {
    std::string location, offset, length;
    absl::StatusCode code;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"weights.bin", "4", "8", absl::StatusCode::kInvalidArgument,
       "of 8 bytes at offset 4 runs beyond the end"},
      {"weights.bin", "9", "", absl::StatusCode::kInvalidArgument,
       "offset 9 lies beyond the end"},
      {"weights.bin", "-1", "", absl::StatusCode::kInvalidArgument,
       "offset \"-1\" is no non-negative integer"},
      {"missing.bin", "", "", absl::StatusCode::kNotFound,
       "cannot open its external data file"},
      {"", "", "", absl::StatusCode::kInvalidArgument, "names no location"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    absl::StatusOr<onnx::ModelProto> model = ReadOnnxModel(
        WriteModel(dir, ExternalFloats("w", {2}, c.location, c.offset,
                                       c.length))
            .string());
    EXPECT_EQ(model.status().code(), c.code);
    EXPECT_THAT(std::string(model.status().message()), HasSubstr(c.error));
  }

  // A length that is not the tensor's size reaches the decoder.
  absl::StatusOr<std::vector<float>> y = ReadAndRun(
      WriteModel(dir, ExternalFloats("w", {2}, "weights.bin", "0", "4")));
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
}

// A model parsed without ReadOnnxModel still holds references only.
TEST(ExternalDataTest, ImportWithoutLoadingSaysSo) {
  onnx::ModelProto model = Model(13);
  AddInput(model, "x", {2});
  AddInitializer(model, ExternalFloats("w", {2}, "weights.bin", "", ""));
  AddNode(model, "Add", {"x", "w"}, {"y"});
  AddOutput(model, "y");
  absl::StatusOr<ImportedModel> imported = ImportOnnx(model);
  EXPECT_FALSE(imported.ok());
  EXPECT_THAT(std::string(imported.status().message()),
              HasSubstr("not loaded (ReadOnnxModel loads it"));
}

}  // namespace
}  // namespace scopeflow
