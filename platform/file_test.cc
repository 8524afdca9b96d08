#include "platform/file.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace scopeflow {
namespace {

using ::testing::HasSubstr;

std::string TestDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir == nullptr ? "/tmp" : dir;
}

int CountEntries(const std::string& dir) {
  int count = 0;
  DIR* d = opendir(dir.c_str());
  while (dirent* entry = readdir(d)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(d);
  return count;
}

TEST(FileTest, WriteThenReadBack) {
  const std::string path = TestDir() + "/data.bin";
  std::string contents("a\0b", 3);
  contents += std::string(200000, 'x');
  ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
  EXPECT_EQ(*ReadFile(path), contents);
  ASSERT_TRUE(WriteFileAtomically(path, "short").ok());
  EXPECT_EQ(*ReadFile(path), "short");
}

TEST(FileTest, FailedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string dir = TestDir() + "/kept";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/saved";
  ASSERT_TRUE(WriteFileAtomically(path, "precious").ok());
  // Renaming a file over a non-empty directory fails after the bytes were
  // written: the step that fails last.
  const std::string blocker = dir + "/blocker";
  ASSERT_EQ(mkdir(blocker.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(blocker + "/inside", "x").ok());
  absl::Status failed = WriteFileAtomically(blocker, "new");
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("blocker"));
  EXPECT_EQ(*ReadFile(path), "precious");
  EXPECT_EQ(CountEntries(dir), 2);  // "saved" and "blocker", no temporary.
}

TEST(FileTest, MissingFileIsNotFound) {
  absl::StatusOr<std::string> missing = ReadFile(TestDir() + "/nothing-here");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nothing-here"));
  EXPECT_FALSE(WriteFileAtomically(TestDir() + "/no/such/dir/f", "x").ok());
}

}  // namespace
}  // namespace scopeflow
