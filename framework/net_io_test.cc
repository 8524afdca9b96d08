#include "framework/net_io.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

constexpr char kNetText[] = R"pb(
  format_version: 1
  name: "tiny"
  blocks {
    vars {
      name: "x"
      kind: VAR_KIND_DENSE_TENSOR
      dtype: DATA_TYPE_FLOAT32
      shape: [ -1, 4 ]
    }
    vars {
      name: "w"
      dtype: DATA_TYPE_FLOAT32
      shape: [ 4, 2 ]
      persistable: true
    }
    vars { name: "y" dtype: DATA_TYPE_FLOAT32 }
    ops {
      type: "matmul"
      inputs { slot: "X" vars: "x" }
      inputs { slot: "Y" vars: "w" }
      outputs { slot: "Out" vars: "y" }
      attrs { name: "transpose_x" b: false }
      attrs { name: "alpha" f: 1.5 }
      attrs {
        name: "perm"
        ints { values: [ 1, 0 ] }
      }
    }
  }
  blocks {
    parent_idx: 0
    ops { type: "relu" }
  }
)pb";

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir == nullptr ? "/tmp" : dir) + "/" + name;
}

TEST(NetIoTest, ParsesText) {
  absl::StatusOr<NetDef> net = ParseNetText(kNetText);
  ASSERT_TRUE(net.ok()) << net.status();
  EXPECT_EQ(net->name(), "tiny");
  ASSERT_EQ(net->blocks_size(), 2);
  EXPECT_FALSE(net->blocks(0).has_parent_idx());
  EXPECT_EQ(net->blocks(1).parent_idx(), 0);
  const VarDef& x = net->blocks(0).vars(0);
  EXPECT_EQ(x.shape(0), -1);
  EXPECT_TRUE(net->blocks(0).vars(1).persistable());
  const OpDef& op = net->blocks(0).ops(0);
  EXPECT_EQ(op.inputs(1).vars(0), "w");
  EXPECT_FLOAT_EQ(op.attrs(1).f(), 1.5f);
  EXPECT_EQ(op.attrs(2).ints().values(1), 0);
}

TEST(NetIoTest, TextSyntaxErrorNamesLineAndColumn) {
  absl::StatusOr<NetDef> net =
      ParseNetText("format_version: 1\nblocks { opz { } }\n");
  ASSERT_FALSE(net.ok());
  EXPECT_EQ(net.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(net.status().message(), HasSubstr("line 2 column"));
  EXPECT_THAT(net.status().message(), HasSubstr("opz"));
}

TEST(NetIoTest, FloatLiteralsOutsideFloat32AreRefused) {
  const auto parse = [](const std::string& value) {
    return ParseNetText(absl::StrCat(
        "format_version: 1\nblocks {\n  ops { type: \"scale\" attrs { name: "
        "\"scale\" ",
        value, " } }\n}\n"));
  };
  for (const char* ok : {"f: 3.4e38", "f: -3.4e38", "f: 1e-45", "f: inf",
                         "f: -inf", "f: 0.0", "f: 2.5f",
                         "floats { values: "
                         "[ 1e-30, -1e30 ] }"}) {
    EXPECT_TRUE(parse(ok).ok()) << ok << ": " << parse(ok).status();
  }
  const absl::Status big = parse("f: 3.5e38").status();
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(big.message(),
              HasSubstr("line 3 column 48: 3.5e38 is outside the range of "
                        "float32"));
  EXPECT_THAT(big.message(), HasSubstr("stored as inf"));
  EXPECT_THAT(parse("f: -1e39").status().message(),
              HasSubstr("1e39 is outside"));
  EXPECT_THAT(parse("floats { values: [ 1, 1e400 ] }").status().message(),
              HasSubstr("1e400 is outside"));
  EXPECT_THAT(parse("f: 1e-50").status().message(),
              HasSubstr("1e-50 is outside the range of float32"));
  // A float in a comment or a string is no literal.
  EXPECT_TRUE(
      ParseNetText("format_version: 1 # 3.5e38\nname: \"3.5e38\"\n").ok());
}

TEST(NetIoTest, WrongFormatVersionIsRefused) {
  absl::StatusOr<NetDef> future = ParseNetText("format_version: 7");
  ASSERT_FALSE(future.ok());
  EXPECT_THAT(future.status().message(),
              HasSubstr("has format_version 7; this build reads version 1"));
  absl::StatusOr<NetDef> missing = ParseNetText("name: \"old\"");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("is `format_version: 1` missing?"));

  NetDef net;
  net.set_format_version(2);
  EXPECT_FALSE(ParseNetBinary(net.SerializeAsString()).ok());
}

TEST(NetIoTest, BinaryRoundTripAndGarbage) {
  NetDef net = *ParseNetText(kNetText);
  const std::string bytes = net.SerializeAsString();
  absl::StatusOr<NetDef> back = ParseNetBinary(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->SerializeAsString(), bytes);

  absl::StatusOr<NetDef> truncated =
      ParseNetBinary(bytes.substr(0, bytes.size() / 2));
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(truncated.status().message(), HasSubstr("not a valid binary"));
  EXPECT_FALSE(ParseNetBinary("\xff\xff\xff\xff garbage").ok());
}

TEST(NetIoTest, SaveAndLoadFilesOfBothKinds) {
  NetDef net = *ParseNetText(kNetText);
  for (const char* name : {"net.pbtxt", "net.pb"}) {
    const std::string path = TempPath(name);
    ASSERT_TRUE(SaveNet(net, path).ok());
    absl::StatusOr<NetDef> loaded = LoadNet(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->SerializeAsString(), net.SerializeAsString());
  }
  // The text file is really text.
  EXPECT_THAT(*ReadFile(TempPath("net.pbtxt")), HasSubstr("format_version: 1"));
}

TEST(NetIoTest, LoadErrorsNameThePath) {
  absl::StatusOr<NetDef> missing = LoadNet(TempPath("absent.pb"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.pb"));

  const std::string garbage = TempPath("garbage.pb");
  ASSERT_TRUE(WriteFileAtomically(garbage, "\x0a\xff\xff\xff\xff\x0f").ok());
  absl::StatusOr<NetDef> bad = LoadNet(garbage);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("net file "));
  EXPECT_THAT(bad.status().message(), HasSubstr("garbage.pb"));
}

}  // namespace
}  // namespace scopeflow
