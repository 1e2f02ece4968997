#pragma once
// Running the kingman program from tests: exit status, stdout and stderr of one command.
#include <filesystem>
#include <string>
#include <vector>

namespace kingman::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `program args...` through /bin/sh with each argument single-quoted.
ProcessResult run_process(const std::string& program, const std::vector<std::string>& args);

// A fresh empty directory under the system temp folder, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes text to name inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

std::string read_text(const std::string& path);

}  // namespace kingman::testing
