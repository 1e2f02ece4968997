#include "kingman/io/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kingman/error.hpp"

namespace kingman {
namespace {

namespace fs = std::filesystem;

// A folder under the system temp dir, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::random_device seed;
    path_ = fs::temp_directory_path() /
            ("kingman-output-test-" + std::to_string(seed()) + std::to_string(seed()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

  // Names of everything in the folder, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

using Strings = std::vector<std::string>;

TEST(OutputFile, WritesANewFileAndLeavesNothingElse) {
  TempDir dir;
  const fs::path target = dir.path() / "tree.nwk";
  write_output_file(target.string(), "((0,1),2);\n");
  EXPECT_EQ(read_file(target), "((0,1),2);\n");
  EXPECT_EQ(dir.entries(), (Strings{"tree.nwk"}));
}

TEST(OutputFile, ReplacesAnExistingFileWhole) {
  TempDir dir;
  const fs::path target = dir.path() / "out.json";
  std::ofstream(target) << std::string(10000, 'x');
  write_output_file(target.string(), "{}");
  EXPECT_EQ(read_file(target), "{}");
  EXPECT_EQ(dir.entries(), (Strings{"out.json"}));
}

TEST(OutputFile, WritesEmptyAndBinaryContent) {
  TempDir dir;
  const fs::path empty = dir.path() / "empty";
  write_output_file(empty.string(), "");
  EXPECT_TRUE(fs::exists(empty));
  EXPECT_EQ(fs::file_size(empty), 0u);

  const std::string bytes("a\0b\r\n\xff", 6);
  const fs::path binary = dir.path() / "binary";
  write_output_file(binary.string(), bytes);
  EXPECT_EQ(read_file(binary), bytes);
}

TEST(OutputFile, KeepsThePermissionsOfAReplacedFile) {
  TempDir dir;
  const fs::path target = dir.path() / "linkage.csv";
  std::ofstream(target) << "old";
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  write_output_file(target.string(), "new");
  EXPECT_EQ(fs::status(target).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(OutputFile, NewFileGetsPermissionsFromTheUmaskNotOwnerOnly) {
  TempDir dir;
  const mode_t previous = ::umask(022);
  const fs::path target = dir.path() / "new.csv";
  write_output_file(target.string(), "1\n");
  ::umask(previous);
  struct stat info {};
  ASSERT_EQ(::stat(target.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(OutputFile, NonexistentFolderThrowsAndCreatesNothing) {
  TempDir dir;
  const fs::path missing_folder = dir.path() / "no-such-folder";
  const fs::path target = missing_folder / "out.json";
  try {
    write_output_file(target.string(), "{}");
    FAIL() << "no error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(target.string()), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(missing_folder));
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OutputFile, FailedRenameRemovesTheTemporaryFile) {
  // A folder stands where the file should go: the temporary file is written, the rename fails.
  TempDir dir;
  const fs::path target = dir.path() / "occupied";
  fs::create_directory(target);
  std::ofstream(target / "keep") << "kept";
  EXPECT_THROW(write_output_file(target.string(), "content"), Error);
  EXPECT_EQ(dir.entries(), (Strings{"occupied"}));
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(read_file(target / "keep"), "kept");
}

// A pipe or device (e.g. --linkage /dev/null) must be written in place, never replaced by a
// regular file through the temporary-file rename.
TEST(OutputFile, WritesIntoAFifoWithoutReplacingIt) {
  TempDir dir;
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A non-blocking reader lets the writer's open succeed at once.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_output_file(fifo.string(), "through the pipe");
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof buffer - 1);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(dir.entries(), (Strings{"pipe"}));
}

TEST(OutputFile, DashWritesToStandardOutput) {
  testing::internal::CaptureStdout();
  write_output_file("-", "to stdout\n");
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "to stdout\n");
}

}  // namespace
}  // namespace kingman
