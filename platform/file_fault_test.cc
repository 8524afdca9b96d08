// An atomic write that fails at any step, or whose process is killed in
// the middle, leaves the previous file whole and, by the next save, no
// temporary file behind.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/file.h"

namespace scopeflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TestDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir == nullptr ? "/tmp" : dir;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* entry = readdir(d)) {
    if (entry->d_name[0] != '.') names.push_back(entry->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

FileStep failing_step;
int failing_errno = 0;

int FailAtStep(FileStep step) {
  return step == failing_step ? failing_errno : 0;
}

struct Fault {
  FileStep step;
  int error;
  absl::StatusCode code;
  const char* message;
};

class FileFaultTest : public testing::TestWithParam<Fault> {
 protected:
  void TearDown() override { SetFileFaultForTesting(nullptr); }
};

TEST_P(FileFaultTest, PreviousFileSurvivesAndNoTemporaryIsLeft) {
  const Fault& fault = GetParam();
  const std::string dir =
      TestDir() + "/fault" + std::to_string(static_cast<int>(fault.step));
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/params";
  const std::string previous(100000, 'p');
  ASSERT_TRUE(WriteFileAtomically(path, previous).ok());
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);

  failing_step = fault.step;
  failing_errno = fault.error;
  SetFileFaultForTesting(&FailAtStep);
  const absl::Status failed =
      WriteFileAtomically(path, std::string(300000, 'n'));
  SetFileFaultForTesting(nullptr);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.code(), fault.code) << failed;
  EXPECT_THAT(failed.message(), HasSubstr(fault.message));
  EXPECT_THAT(failed.message(), HasSubstr("params"));
  EXPECT_THAT(Entries(dir), ElementsAre("params"));
  EXPECT_EQ(*ReadFile(path), previous);

  // The next save works.
  ASSERT_TRUE(WriteFileAtomically(path, "next").ok());
  EXPECT_EQ(*ReadFile(path), "next");
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640);
}

INSTANTIATE_TEST_SUITE_P(
    EachStep, FileFaultTest,
    testing::Values(Fault{FileStep::kCreate, EACCES,
                          absl::StatusCode::kPermissionDenied, "cannot create"},
                    Fault{FileStep::kWrite, ENOSPC,
                          absl::StatusCode::kResourceExhausted,
                          "No space left on device"},
                    Fault{FileStep::kSync, EIO, absl::StatusCode::kUnknown,
                          "Input/output error"},
                    Fault{FileStep::kRename, EXDEV, absl::StatusCode::kUnknown,
                          "cannot rename"}));

TEST_F(FileFaultTest, UnflushedFolderIsReportedAfterTheRename) {
  const std::string dir = TestDir() + "/fault_folder";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/params";
  failing_step = FileStep::kSyncFolder;
  failing_errno = EIO;
  SetFileFaultForTesting(&FailAtStep);
  const absl::Status failed = WriteFileAtomically(path, "new");
  SetFileFaultForTesting(nullptr);
  EXPECT_THAT(failed.message(), HasSubstr("cannot flush its folder"));
  EXPECT_THAT(Entries(dir), ElementsAre("params"));
}

// A child process saves a large file in pieces and is killed with SIGKILL
// in the middle: the previous file is whole, the child's temporary is left
// (nothing can run at SIGKILL) and the next save removes it.
TEST(FileKillTest, KilledSaveLeavesThePreviousFileAndTheNextSaveCleansUp) {
  const std::string dir = TestDir() + "/killed";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/ckpt";
  const std::string previous(1 << 20, 'p');
  ASSERT_TRUE(WriteFileAtomically(path, previous).ok());

  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    absl::StatusOr<std::unique_ptr<AtomicFileWriter>> writer =
        AtomicFileWriter::Open(path);
    if (!writer.ok()) _exit(1);
    const std::string chunk(1 << 20, 'n');
    for (int i = 0;; ++i) {
      if (!(*writer)->Append(chunk).ok()) _exit(2);
      if (i == 8 && write(ready[1], "w", 1) != 1) _exit(3);
      if (i >= 8) pause();  // Mid-save until killed.
    }
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  const std::string leftover = "ckpt.tmp." + std::to_string(child) + ".";
  std::vector<std::string> entries = Entries(dir);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], "ckpt");
  EXPECT_THAT(entries[1], testing::StartsWith(leftover));
  EXPECT_EQ(*ReadFile(path), previous);

  testing::internal::CaptureStderr();
  ASSERT_TRUE(WriteFileAtomically(dir + "/other", "next").ok());
  EXPECT_THAT(testing::internal::GetCapturedStderr(),
              HasSubstr(dir + "/" + entries[1]));
  EXPECT_THAT(Entries(dir), ElementsAre("ckpt", "other"));
  EXPECT_EQ(*ReadFile(path), previous);
}

}  // namespace
}  // namespace scopeflow
