#include "core/OutputFile.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/Error.h"

namespace cb {
namespace {

// Where the bytes go: `path` to open or rename onto, and what is there now.
struct Target {
  std::string path;
  bool exists = false;
  struct stat st {};
};

Target resolve(const std::string& path, std::string_view flag) {
  Target t{path};
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) {
    if (errno == ENOENT) return t;
    throw UsageError(fmt::format("{} '{}': {}", flag, path, std::strerror(errno)));
  }
  t.exists = true;
  t.st = lst;
  if (!S_ISLNK(lst.st_mode)) return t;
  if (::stat(path.c_str(), &t.st) != 0) {
    throw UsageError(fmt::format("{} '{}' is a symlink to nothing", flag, path));
  }
  // A link to a device or FIFO (/dev/stdout, /proc/self/fd/N: magic links realpath cannot name)
  // is opened through the link itself; a link to a regular file names the file to replace.
  if (!S_ISREG(t.st.st_mode)) return t;
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    t.path = real;
    std::free(real);
  }
  return t;
}

std::string folderOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A mkstemp template in the target's folder: ".NAME.XXXXXX".
std::string temporaryBeside(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return folderOf(path) + "/." + base + ".XXXXXX";
}

// What may not be written at all, or "" when the kind of file is fine.
std::string refusedKind(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (S_ISBLK(st.st_mode)) return "is a block device (refused: it would be overwritten)";
  if (S_ISSOCK(st.st_mode)) return "is a socket";
  return "";
}

void writeAll(int fd, std::string_view text, const std::string& path, std::string_view flag) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw EnvironmentError(
          fmt::format("{} '{}': write failed: {}", flag, path, std::strerror(n < 0 ? errno : EIO)));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// A FIFO or a character device: written in place, never replaced by a regular file.
void writeThrough(const Target& t, std::string_view text, std::string_view flag) {
  // O_NONBLOCK first: opening a FIFO for writing blocks until a reader comes, possibly forever.
  const int fd = ::open(t.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw EnvironmentError(fmt::format("{} '{}': {}", flag, t.path,
                                       e == ENXIO ? "a FIFO with no reader" : std::strerror(e)));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  try {
    writeAll(fd, text, t.path, flag);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) {
    throw EnvironmentError(fmt::format("{} '{}': {}", flag, t.path, std::strerror(errno)));
  }
}

mode_t newFileMode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void checkOutputPath(const std::string& path, std::string_view flag) {
  if (path.empty()) throw UsageError(fmt::format("{} is empty: give a file name", flag));
  const Target t = resolve(path, flag);
  if (t.exists) {
    if (std::string why = refusedKind(t.st); !why.empty()) {
      throw UsageError(fmt::format("{} '{}' {}", flag, path, why));
    }
    if (::access(t.path.c_str(), W_OK) != 0) {
      throw UsageError(fmt::format("{} '{}': cannot write: {}", flag, path, std::strerror(errno)));
    }
    if (!S_ISREG(t.st.st_mode)) return;  // written in place: its folder does not matter
  }
  const std::string folder = folderOf(t.path);
  struct stat fst {};
  if (::stat(folder.c_str(), &fst) != 0 || !S_ISDIR(fst.st_mode)) {
    throw UsageError(
        fmt::format("{} '{}': cannot write: folder '{}' does not exist", flag, path, folder));
  }
  // The file is written beside its target and renamed: make (and drop) such a file now, which
  // also catches what access() lets root past (a read-only mount, sysfs).
  std::string probe = temporaryBeside(t.path);
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw UsageError(fmt::format("{} '{}': cannot write: {}", flag, path, std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void writeOutputFile(const std::string& path, std::string_view text, std::string_view flag) {
  const Target t = resolve(path, flag);
  if (t.exists) {
    if (std::string why = refusedKind(t.st); !why.empty()) {
      throw EnvironmentError(fmt::format("{} '{}' {}", flag, path, why));
    }
    if (!S_ISREG(t.st.st_mode)) return writeThrough(t, text, flag);
  }
  std::string temporary = temporaryBeside(t.path);
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    throw EnvironmentError(fmt::format("{} '{}': cannot create a file beside it: {}", flag, path,
                                       std::strerror(errno)));
  }
  bool open = true;
  try {
    // mkstemp makes 0600; the result gets the mode the file had, or a new file's usual mode.
    ::fchmod(fd, t.exists ? (t.st.st_mode & 07777) : newFileMode());
    writeAll(fd, text, path, flag);
    // A full disk may only show at fsync or close (delayed allocation).
    const bool synced = ::fsync(fd) == 0;
    const int syncErrno = errno;
    open = false;
    if (::close(fd) != 0 || !synced) {
      throw EnvironmentError(
          fmt::format("{} '{}': {}", flag, path, std::strerror(synced ? errno : syncErrno)));
    }
  } catch (...) {
    if (open) ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::rename(temporary.c_str(), t.path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temporary.c_str());
    throw EnvironmentError(fmt::format("{} '{}': {}", flag, path, std::strerror(e)));
  }
}

}  // namespace cb
