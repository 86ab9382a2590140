#include "engine/common/platform.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>

#ifdef _WIN32
#include <io.h>
#include <process.h>
#include <windows.h>
#else
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>
#endif

namespace p64::platform {

int process_id() {
#ifdef _WIN32
  return _getpid();
#else
  return static_cast<int>(getpid());
#endif
}

bool process_running(int pid) {
  if (pid <= 0) return false;
#ifdef _WIN32
  HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, static_cast<DWORD>(pid));
  if (!h) return GetLastError() == ERROR_ACCESS_DENIED;  // someone else's process, running
  const bool running = WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
  CloseHandle(h);
  return running;
#else
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;  // EPERM: another user's, running
#endif
}

bool stderr_is_terminal() {
#ifdef _WIN32
  return _isatty(_fileno(stderr)) != 0;
#else
  return isatty(STDERR_FILENO) != 0;
#endif
}

std::tm utc_time(std::time_t t) {
  std::tm tm{};
#ifdef _WIN32
  gmtime_s(&tm, &t);
#else
  gmtime_r(&t, &tm);
#endif
  return tm;
}

bool sync_to_disk(int fd) {
#ifdef _WIN32
  return _commit(fd) == 0;
#else
  return fsync(fd) == 0;
#endif
}

bool sync_directory(const std::string& dir) {
#ifdef _WIN32
  (void)dir;
  return true;
#else
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return false;
  const bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
#endif
}

bool sync_to_disk(std::FILE* f) { return std::fflush(f) == 0 && sync_to_disk(fileno(f)); }

int create_unique_file(std::string& path_template, int suffix_len, bool shared_read) {
#ifdef _WIN32
  // No mkstemps: try random names with O_EXCL until one is new.
  const size_t x = path_template.size() - static_cast<size_t>(suffix_len) - 6;
  if (suffix_len < 0 || path_template.size() < static_cast<size_t>(suffix_len) + 6 ||
      path_template.compare(x, 6, "XXXXXX") != 0) {
    errno = EINVAL;
    return -1;
  }
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    for (size_t i = 0; i < 6; ++i) path_template[x + i] = kChars[rd() % (sizeof kChars - 1)];
    (void)shared_read;  // Windows files carry no POSIX mode bits
    const int fd = _open(path_template.c_str(), _O_RDWR | _O_CREAT | _O_EXCL | _O_BINARY, _S_IREAD | _S_IWRITE);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
#else
  const int fd = mkstemps(path_template.data(), suffix_len);
  if (fd >= 0 && shared_read) fchmod(fd, 0644);  // mkstemps makes 0600
  return fd;
#endif
}

int64_t write_at(int fd, const void* p, uint64_t n, uint64_t offset) {
#ifdef _WIN32
  HANDLE h = reinterpret_cast<HANDLE>(_get_osfhandle(fd));
  if (h == INVALID_HANDLE_VALUE) {
    errno = EBADF;
    return -1;
  }
  OVERLAPPED ov{};
  ov.Offset = static_cast<DWORD>(offset & 0xFFFFFFFFu);
  ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
  const DWORD chunk = static_cast<DWORD>(n > (1u << 30) ? (1u << 30) : n);
  DWORD written = 0;
  if (!WriteFile(h, p, chunk, &written, &ov)) {
    errno = GetLastError() == ERROR_DISK_FULL || GetLastError() == ERROR_HANDLE_DISK_FULL ? ENOSPC : EIO;
    return -1;
  }
  return static_cast<int64_t>(written);
#else
  return static_cast<int64_t>(pwrite(fd, p, n, static_cast<off_t>(offset)));
#endif
}

int reserve_file(int fd, uint64_t size) {
#ifdef _WIN32
  // Sizing the file allocates it on NTFS; a full disk fails here with ENOSPC.
  return _chsize_s(fd, static_cast<__int64>(size));
#else
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc == 0 || is_disk_full_error(rc)) return rc;
  // File systems without fallocate: a sparse file of the right size.
  return ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : errno;
#endif
}

int seek_to(std::FILE* f, uint64_t offset) {
#ifdef _WIN32
  return _fseeki64(f, static_cast<__int64>(offset), SEEK_SET);
#else
  return fseeko(f, static_cast<off_t>(offset), SEEK_SET);
#endif
}

int close_file(int fd) {
#ifdef _WIN32
  return _close(fd);
#else
  return close(fd);
#endif
}

bool is_disk_full_error(int e) {
#ifdef EDQUOT
  if (e == EDQUOT) return true;
#endif
  return e == ENOSPC;
}

DynamicLibrary::~DynamicLibrary() {
  if (!handle_) return;
#ifdef _WIN32
  FreeLibrary(static_cast<HMODULE>(handle_));
#else
  dlclose(handle_);
#endif
}

bool DynamicLibrary::open(std::initializer_list<const char*> names) {
  error_.clear();
  for (const char* name : names) {
#ifdef _WIN32
    handle_ = reinterpret_cast<void*>(LoadLibraryA(name));
    if (!handle_) error_ += std::string(error_.empty() ? "" : "; ") + name + ": LoadLibrary error " + std::to_string(GetLastError());
#else
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* e = dlerror();
      error_ += std::string(error_.empty() ? "" : "; ") + (e ? e : name);
    }
#endif
    if (handle_) return true;
  }
  return false;
}

void* DynamicLibrary::symbol(const char* name) const {
  if (!handle_) return nullptr;
#ifdef _WIN32
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle_), name));
#else
  return dlsym(handle_, name);
#endif
}

}  // namespace p64::platform
