#include "run_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace kingman::testing {

namespace {

// Single-quotes an argument for /bin/sh; an embedded quote becomes '\''. Built with
// push_back only (GCC 12 warns falsely, -Wrestrict, on operator+= with literals here).
std::string quoted(const std::string& arg) {
  std::string out;
  out.reserve(arg.size() + 2);
  out.push_back('\'');
  for (char c : arg) {
    if (c == '\'') {
      for (char e : {'\'', '\\', '\'', '\''}) out.push_back(e);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args) {
  TempDir scratch;
  const std::string err_path = scratch.file("stderr");
  std::string command = quoted(program);
  for (const std::string& arg : args) {
    command.push_back(' ');
    command += quoted(arg);
  }
  command += " 2>";
  command += quoted(err_path);
  command += " </dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed for " + command);
  ProcessResult result;
  char buffer[4096];
  std::size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, got);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_path);
  return result;
}

TempDir::TempDir() {
  std::random_device device;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto candidate =
        std::filesystem::temp_directory_path() /
        ("kingman-test-" + std::to_string(getpid()) + "-" + std::to_string(device()));
    if (std::filesystem::create_directory(candidate)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string path = file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace kingman::testing
