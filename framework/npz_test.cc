#include "framework/npz.h"

#include <string>

#include "framework/op_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Written by numpy 1.24: np.savez (stored, with zip64 local headers) and
// np.savez_compressed (deflated) of weights = arange(6).reshape(2, 3) / 4
// (float32) and bias = [1, -2, 3] (int64).
void ExpectNumpyArchive(const std::string& path) {
  absl::StatusOr<NamedTensors> read = ReadNpz(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].first, "weights");
  EXPECT_EQ((*read)[0].second.dtype(), kFloat32);
  EXPECT_THAT((*read)[0].second.dims(), ElementsAre(2, 3));
  EXPECT_THAT(Values<float>((*read)[0].second),
              ElementsAre(0, 0.25, 0.5, 0.75, 1, 1.25));
  EXPECT_EQ((*read)[1].first, "bias");
  EXPECT_THAT(Values<int64_t>((*read)[1].second), ElementsAre(1, -2, 3));
}

TEST(NpzTest, ReadsNumpysStoredArchive) {
  ExpectNumpyArchive("framework/testdata/stored.npz");
}

TEST(NpzTest, ReadsNumpysCompressedArchive) {
  ExpectNumpyArchive("framework/testdata/deflated.npz");
}

TEST(NpzTest, RoundTrips) {
  NamedTensors tensors = {{"fc1.w", MakeTensor<float>({2, 2}, {1.5, -2, 3, 4})},
                          {"step", MakeTensor<int64_t>({1}, {7})},
                          {"empty", MakeTensor<float>({0, 3}, {})}};
  absl::StatusOr<std::string> bytes = SerializeNpz(tensors);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<NamedTensors> read = ParseNpz(*bytes, "round trip");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0].first, "fc1.w");
  EXPECT_THAT(Values<float>((*read)[0].second), ElementsAre(1.5, -2, 3, 4));
  EXPECT_EQ((*read)[1].first, "step");
  EXPECT_THAT(Values<int64_t>((*read)[1].second), ElementsAre(7));
  EXPECT_THAT((*read)[2].second.dims(), ElementsAre(0, 3));
  // Same tensors, same bytes.
  EXPECT_EQ(*SerializeNpz(tensors), *bytes);
}

TEST(NpzTest, BadArchivesAreNamed) {
  absl::StatusOr<std::string> good =
      SerializeNpz({{"w", MakeTensor<float>({3}, {1, 2, 3})}});
  ASSERT_TRUE(good.ok());
  EXPECT_THAT(ParseNpz("not a zip at all, clearly", "x.npz").status().message(),
              HasSubstr("x.npz is not a zip archive (npz)"));
  std::string flipped = *good;
  flipped[40 + 128] ^= 1;  // a data byte of w.npy (after the local header)
  EXPECT_THAT(ParseNpz(flipped, "x.npz").status().message(),
              HasSubstr("x.npz: member \"w.npy\" is corrupt: CRC-32 mismatch"));
  EXPECT_THAT(ParseNpz(good->substr(20), "x.npz").status().message(),
              HasSubstr("x.npz"));
  EXPECT_THAT(ReadNpz("framework/testdata/none.npz").status().message(),
              HasSubstr("none.npz"));
}

}  // namespace
}  // namespace scopeflow
