#pragma once
// The few operating-system services the engine needs beyond standard C++, one implementation
// per platform (POSIX, Windows) in platform.cpp, so the rest of the engine and the CLI build
// for Linux and for Windows (mingw-w64) unchanged. File mapping lives in mapped_file.h.
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <string>

namespace p64::platform {

int process_id();
// Whether a process with this id exists now (kill(pid, 0) / OpenProcess). An id the system has
// since given to another process counts as running.
bool process_running(int pid);

// isatty / _isatty on standard error: whether progress can be redrawn in place.
bool stderr_is_terminal();

// gmtime_r / gmtime_s: `t` as UTC calendar time.
std::tm utc_time(std::time_t t);

// Flushes the stream and asks the OS to put the file's bytes on the disk (fsync / _commit).
// False with errno set when either fails.
bool sync_to_disk(std::FILE* f);
bool sync_to_disk(int fd);
// fsync of a folder, so a rename into it survives a crash. True where folders cannot be
// synced (Windows); false with errno set when it fails.
bool sync_directory(const std::string& dir);

// Creates a new, empty file from `path_template`, whose last `suffix_len` characters are kept
// and the six before them are "XXXXXX" (replaced by a unique name). Returns an open
// read-write descriptor and rewrites `path_template` with the name; -1 with errno on failure.
// The file is private to the user (0600) unless `shared_read` (0644: an output, not a scratch file).
int create_unique_file(std::string& path_template, int suffix_len, bool shared_read = false);

// Writes n bytes at `offset` (pwrite semantics: the result is the count written, or -1 with
// errno). Short writes are possible; callers loop.
int64_t write_at(int fd, const void* p, uint64_t n, uint64_t offset);

// Gives the file `size` bytes, claiming the blocks where the file system can (so a full disk
// fails here, not halfway through). Returns 0 or an errno value (ENOSPC, EDQUOT, ...).
int reserve_file(int fd, uint64_t size);

int close_file(int fd);  // close / _close

// fseeko / _fseeki64: a 64-bit absolute position (files above 4 GiB are normal). 0 on success.
int seek_to(std::FILE* f, uint64_t offset);

// ENOSPC, or EDQUOT where the platform has quotas.
bool is_disk_full_error(int e);

// A shared library opened at run time (GPU runtimes: the Vulkan loader, ...).
class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // Tries each name in turn; false (with error() saying why) when none loads.
  bool open(std::initializer_list<const char*> names);
  void* symbol(const char* name) const;  // nullptr when absent
  bool is_open() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace p64::platform
