#include "framework/training/dataset.h"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <numeric>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

TEST(LoadCsvDatasetTest, ReadsPlainCsv) {
  const std::string path = TempPath("plain.csv");
  ASSERT_TRUE(WriteFileAtomically(path, "0,16,8,1\n4,2,0,0\n\n1,1,1,2\n").ok());
  auto data = LoadCsvDataset(path, 1.0f / 16);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), 3);
  EXPECT_THAT(data->features.dims(), ElementsAre(3, 3));
  EXPECT_THAT(data->labels.dims(), ElementsAre(3, 1));
  EXPECT_EQ(data->num_classes, 3);
  EXPECT_FLOAT_EQ(data->features.data<float>()[1], 1.0f);
  EXPECT_FLOAT_EQ(data->features.data<float>()[2], 0.5f);
  EXPECT_EQ(data->labels.data<int64_t>()[2], 2);
}

TEST(LoadCsvDatasetTest, ReadsGzip) {
  const std::string path = TempPath("data.csv.gz");
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::string text = "1,2,0\n3,4,1\n";
  gzwrite(file, text.data(), text.size());
  gzclose(file);
  auto data = LoadCsvDataset(path);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), 2);
  EXPECT_FLOAT_EQ(data->features.data<float>()[3], 4.0f);
}

TEST(LoadCsvDatasetTest, Errors) {
  EXPECT_THAT(LoadCsvDataset(TempPath("missing.csv")).status().message(),
              HasSubstr("missing.csv"));
  const std::string ragged = TempPath("ragged.csv");
  ASSERT_TRUE(WriteFileAtomically(ragged, "1,2,0\n3,1\n").ok());
  EXPECT_THAT(LoadCsvDataset(ragged).status().message(),
              HasSubstr("line 2: 1 feature values, earlier lines have 2"));
  const std::string text = TempPath("text.csv");
  ASSERT_TRUE(WriteFileAtomically(text, "1,x,0\n").ok());
  EXPECT_THAT(LoadCsvDataset(text).status().message(),
              HasSubstr("line 1: feature 1 is \"x\""));
  const std::string label = TempPath("label.csv");
  ASSERT_TRUE(WriteFileAtomically(label, "1,2,0.5\n").ok());
  EXPECT_THAT(LoadCsvDataset(label).status().message(),
              HasSubstr("label \"0.5\""));
}

TEST(LoadCsvDatasetTest, TheDigitsFromDebian) {
  auto data = LoadCsvDataset(kDebianDigitsPath, 1.0f / 16);
  if (!data.ok() && data.status().code() == absl::StatusCode::kNotFound) {
    GTEST_SKIP() << "python3-sklearn is not installed: " << data.status();
  }
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->size(), 1797);
  EXPECT_EQ(data->features.dim(1), 64);
  EXPECT_EQ(data->num_classes, 10);
  auto split = SplitTail(*data, 0.2);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train.size(), 1438);
  EXPECT_EQ(split->test.size(), 359);
}

TEST(SplitShuffledTest, IsAFixedPartitionOfTheRows) {
  Dataset data;
  constexpr int64_t kRows = 50;
  ASSERT_TRUE(data.features.Allocate(CPUPlace(), kFloat32, {kRows, 1}).ok());
  ASSERT_TRUE(data.labels.Allocate(CPUPlace(), kInt64, {kRows, 1}).ok());
  for (int64_t i = 0; i < kRows; ++i) {
    data.features.data<float>()[i] = static_cast<float>(i);
    data.labels.data<int64_t>()[i] = i;
  }
  auto split = SplitShuffled(data, 0.2, 3);
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->train.size(), 40);
  ASSERT_EQ(split->test.size(), 10);
  std::set<int64_t> seen;
  std::vector<int64_t> test_rows;
  for (const Dataset* part : {&split->train, &split->test}) {
    for (int64_t i = 0; i < part->size(); ++i) {
      const int64_t label = part->labels.data<int64_t>()[i];
      // Features travel with their label.
      EXPECT_EQ(part->features.data<float>()[i], static_cast<float>(label));
      seen.insert(label);
      if (part == &split->test) test_rows.push_back(label);
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRows));
  // Not the tail, and the same again for the same seed only.
  std::vector<int64_t> tail(10);
  std::iota(tail.begin(), tail.end(), 40);
  EXPECT_NE(test_rows, tail);
  auto again = SplitShuffled(data, 0.2, 3);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::vector<int64_t>(again->test.labels.data<int64_t>(),
                                 again->test.labels.data<int64_t>() + 10),
            test_rows);
  auto other = SplitShuffled(data, 0.2, 4);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(std::vector<int64_t>(other->test.labels.data<int64_t>(),
                                 other->test.labels.data<int64_t>() + 10),
            test_rows);
  EXPECT_FALSE(SplitShuffled(data, 0, 3).ok());
}

TEST(EpochOrderTest, IsAPermutationFixedBySeedAndEpoch) {
  const auto a = EpochOrder(100, 7, 3);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 100u);
  EXPECT_EQ(a, EpochOrder(100, 7, 3));
  EXPECT_NE(a, EpochOrder(100, 7, 4));
  EXPECT_NE(a, EpochOrder(100, 8, 3));
}

TEST(GatherTest, CopiesRows) {
  Dataset data;
  ASSERT_TRUE(data.features.Allocate(CPUPlace(), kFloat32, {3, 2}).ok());
  ASSERT_TRUE(data.labels.Allocate(CPUPlace(), kInt64, {3, 1}).ok());
  for (int i = 0; i < 6; ++i) data.features.data<float>()[i] = i;
  for (int i = 0; i < 3; ++i) data.labels.data<int64_t>()[i] = 10 + i;
  auto batch = Gather(data, {2, 0});
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(std::vector<float>(batch->features.data<float>(),
                                 batch->features.data<float>() + 4),
              ElementsAre(4, 5, 0, 1));
  EXPECT_THAT(std::vector<int64_t>(batch->labels.data<int64_t>(),
                                   batch->labels.data<int64_t>() + 2),
              ElementsAre(12, 10));
  EXPECT_THAT(Gather(data, {3}).status().message(), HasSubstr("row 3"));
  EXPECT_FALSE(SplitTail(data, 1.5).ok());
}

}  // namespace
}  // namespace scopeflow
