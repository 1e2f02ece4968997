#include "kingman/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kingman/error.hpp"

namespace kingman {
namespace {

// The process umask, read without changing it: umask(2) can only be queried by setting it,
// which would race with other threads creating files.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
    }
  }
  return 022;  // the usual default where /proc is unavailable
}

// mkstemp creates files readable only by the owner; a result file should get the permissions
// of the file it replaces, or those a plain open() would give a new file.
mode_t mode_for(const std::string& path) {
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) return existing.st_mode & 07777;
  return 0666 & ~current_umask();
}

[[noreturn]] void fail(const std::string& path, const char* what, int error_number) {
  throw Error(fmt::format("{}: {}: {}", path, what, std::strerror(error_number)));
}

void write_all(int descriptor, const std::string& content, const std::string& path) {
  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(descriptor, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot write", errno);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

}  // namespace

void write_output_file(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout.write(content.data(), static_cast<std::streamsize>(content.size()));
    std::cout.flush();
    if (!std::cout) throw Error("stdout: cannot write output");
    return;
  }

  // A device or pipe (/dev/null, /dev/stdout, a FIFO) is written in place: renaming a
  // temporary file over it would replace the device with a regular file.
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) fail(path, "is a directory", EISDIR);
    const int device = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (device < 0) fail(path, "cannot open for writing", errno);
    try {
      write_all(device, content, path);
    } catch (...) {
      ::close(device);
      throw;
    }
    ::close(device);
    return;
  }

  std::string temporary = path + ".tmp-XXXXXX";
  std::vector<char> name(temporary.begin(), temporary.end());
  name.push_back('\0');
  const int descriptor = ::mkstemp(name.data());
  if (descriptor < 0) fail(path, "cannot create a temporary file beside it", errno);
  temporary.assign(name.data());

  // From here on, any failure removes the temporary file before reporting.
  try {
    write_all(descriptor, content, path);
    if (::fchmod(descriptor, mode_for(path)) != 0) fail(path, "cannot set permissions", errno);
    // Flush to disk before the rename, so a crash cannot leave an empty file under the name.
    if (::fsync(descriptor) != 0 && errno != EINVAL && errno != EROFS) {
      fail(path, "cannot flush", errno);
    }
  } catch (...) {
    ::close(descriptor);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::close(descriptor) != 0) {
    const int error_number = errno;
    ::unlink(temporary.c_str());
    fail(path, "cannot write", error_number);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temporary.c_str());
    fail(path, "cannot replace", error_number);
  }
}

}  // namespace kingman
