#include "platform/file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
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

mode_t ModeOf(const std::string& path) {
  struct stat info;
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

std::string MakeDir(const std::string& name) {
  const std::string dir = TestDir() + "/" + name;
  EXPECT_EQ(mkdir(dir.c_str(), 0755), 0) << dir;
  return dir;
}

TEST(FileTest, ReplacingKeepsTheModeOfTheOldFile) {
  const std::string dir = MakeDir("modes");
  const std::string path = dir + "/shared";
  ASSERT_TRUE(WriteFileAtomically(path, "v1").ok());
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "v2").ok());
  EXPECT_EQ(ModeOf(path), 0644);
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "v3").ok());
  EXPECT_EQ(ModeOf(path), 0640);
  EXPECT_EQ(*ReadFile(path), "v3");
}

TEST(FileTest, NewFileGetsTheUmaskNotAPrivateMode) {
  const std::string dir = MakeDir("fresh");
  const mode_t mask = umask(022);
  ASSERT_TRUE(WriteFileAtomically(dir + "/new", "x").ok());
  umask(mask);
  EXPECT_EQ(ModeOf(dir + "/new"), 0644);
}

TEST(FileTest, ReplacingKeepsTheOwnerWhereTheWriterMay) {
  const std::string dir = MakeDir("owners");
  const std::string path = dir + "/theirs";
  ASSERT_TRUE(WriteFileAtomically(path, "v1").ok());
  // Only a privileged writer can give a file away; others keep their own
  // (and the test checks that the write still succeeds).
  const bool privileged = geteuid() == 0;
  const uid_t other = privileged ? 4242 : geteuid();
  const gid_t group = privileged ? 4343 : getegid();
  if (privileged) {
    ASSERT_EQ(chown(path.c_str(), other, group), 0);
  }
  ASSERT_TRUE(WriteFileAtomically(path, "v2").ok());
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, other);
  EXPECT_EQ(info.st_gid, group);
}

TEST(FileTest, WritesThroughASymbolicLinkToItsTarget) {
  const std::string dir = MakeDir("links");
  const std::string target = dir + "/real";
  ASSERT_TRUE(WriteFileAtomically(target, "old").ok());
  ASSERT_EQ(symlink("real", (dir + "/link").c_str()), 0);
  ASSERT_EQ(symlink((dir + "/link").c_str(), (dir + "/link2").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/link2", "new").ok());
  struct stat info;
  ASSERT_EQ(lstat((dir + "/link").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  ASSERT_EQ(lstat((dir + "/link2").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
  EXPECT_EQ(*ReadFile(target), "new");
  // A dangling link: the write creates the file it names.
  ASSERT_EQ(symlink("later", (dir + "/dangling").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir + "/dangling", "made").ok());
  EXPECT_EQ(*ReadFile(dir + "/later"), "made");
  EXPECT_EQ(CountEntries(dir), 5);
  // A loop is an error, not a hang.
  ASSERT_EQ(symlink("loop_b", (dir + "/loop_a").c_str()), 0);
  ASSERT_EQ(symlink("loop_a", (dir + "/loop_b").c_str()), 0);
  absl::Status loop = WriteFileAtomically(dir + "/loop_a", "x");
  EXPECT_FALSE(loop.ok());
  EXPECT_THAT(loop.message(), HasSubstr("loop_a"));
}

TEST(FileTest, SafeFileNamesNeverLeaveTheFolder) {
  EXPECT_EQ(SafeFileName("fc1.w@GRAD"), "fc1.w@GRAD");
  EXPECT_EQ(SafeFileName("../victim"), "%2E.%2Fvictim");
  EXPECT_EQ(SafeFileName("/etc/passwd"), "%2Fetc%2Fpasswd");
  EXPECT_EQ(SafeFileName(".."), "%2E.");
  EXPECT_EQ(SafeFileName(".hidden"), "%2Ehidden");
  EXPECT_EQ(SafeFileName(std::string("a\0b", 3)), "a%00b");
  EXPECT_EQ(SafeFileName("50%"), "50%25");
  EXPECT_EQ(SafeFileName("a b\n"), "a%20b%0A");
  EXPECT_EQ(SafeFileName("\xc3\xa9"), "%C3%A9");
  EXPECT_EQ(SafeFileName(""), "%");
  // One to one: names that differ stay apart.
  EXPECT_NE(SafeFileName("a/b"), SafeFileName("a%2Fb"));
  const std::string long_name(300, '/');
  const std::string safe = SafeFileName(long_name);
  EXPECT_LE(safe.size(), 200u);
  EXPECT_EQ(safe.find('/'), std::string::npos);
  EXPECT_NE(safe, SafeFileName(std::string(301, '/')));
  EXPECT_EQ(safe.substr(0, 6), "%2F%2F");
  EXPECT_EQ(safe[safe.size() - 17], '~');
  // Writing under any name makes exactly one file in the folder.
  const std::string dir = MakeDir("names");
  for (const std::string& name :
       {std::string("../escape"), std::string("/abs"), std::string(".."),
        std::string("a/../../b"), std::string("x\0y", 3)}) {
    ASSERT_TRUE(
        WriteFileAtomically(dir + "/" + SafeFileName(name) + ".npy", "x").ok())
        << name;
  }
  EXPECT_EQ(CountEntries(dir), 5);
  EXPECT_FALSE(ReadFile(TestDir() + "/escape.npy").ok());
  EXPECT_FALSE(ReadFile(TestDir() + "/b.npy").ok());
}

TEST(FileTest, TemporaryNamesCarryTheWriterPid) {
  EXPECT_EQ(TemporaryWriterPid("ckpt-1.sfparams.tmp.1234.aZ09xy"), 1234);
  EXPECT_EQ(TemporaryWriterPid("a.tmp.7.ABCDEF"), 7);
  EXPECT_EQ(TemporaryWriterPid("a.tmp.ABCDEF"), -1);  // no pid
  EXPECT_EQ(TemporaryWriterPid("a.tmp.12.ABCDE"), -1);
  EXPECT_EQ(TemporaryWriterPid("a.tmp.12.ABCDE-"), -1);
  EXPECT_EQ(TemporaryWriterPid("a.tmp.1x.ABCDEF"), -1);
  EXPECT_EQ(TemporaryWriterPid(".tmp.12.ABCDEF"), -1);
  EXPECT_EQ(TemporaryWriterPid("notes.txt"), -1);
}

TEST(FileTest, OpenRemovesTemporariesOfDeadWritersOnly) {
  const std::string dir = MakeDir("stale");
  // pid_max is at most 2^22: this process cannot exist.
  const std::string dead = dir + "/old.tmp.99999999.AbCdEf";
  const std::string alive =
      dir + "/old.tmp." + std::to_string(getppid()) + ".AbCdEf";
  const std::string unrelated = dir + "/notes.tmp.backup";
  // Written plainly: an atomic write would already clean up.
  for (const std::string& path : {dead, alive, unrelated}) {
    std::ofstream(path) << "leftover";
  }
  testing::internal::CaptureStderr();
  absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
      AtomicFileWriter::Open(dir + "/fresh");
  const std::string report = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(writer.ok());
  EXPECT_THAT((*writer)->removed_stale(), testing::ElementsAre(dead));
  EXPECT_THAT(report, HasSubstr(dead));
  EXPECT_THAT(report, HasSubstr("99999999"));
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_FALSE(ReadFile(dead).ok());
  EXPECT_TRUE(ReadFile(alive).ok());
  EXPECT_TRUE(ReadFile(unrelated).ok());
}

}  // namespace
}  // namespace scopeflow
