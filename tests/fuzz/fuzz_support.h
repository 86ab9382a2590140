#pragma once
// Shared by the libFuzzer targets. The readers under test take paths (they map files
// read-only), so each input is first written to a scratch file of this process, in /dev/shm
// when it exists so the disk is not worn.
//
// The contract a target checks: a reader either accepts its input or throws p64::Error
// (FormatError for a bad file). Anything else — a sanitizer report, a signal, a different
// exception escaping (libFuzzer reports it as a crash), a hang or unbounded memory — is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace p64::fuzz {

inline const std::string& scratch_dir() {
  // Never destroyed: the exit handler that removes the folder runs after static destructors.
  static const std::string* dir = [] {
    namespace fs = std::filesystem;
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const fs::path d = base / ("p64-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return new std::string(d.string());
  }();
  return *dir;
}

inline std::string write_scratch(const std::string& name, const void* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();  // a scratch file that cannot be written would hide every bug
  return path;
}

inline std::string write_scratch(const std::string& name, std::string_view text) {
  return write_scratch(name, text.data(), text.size());
}

// The folder that holds the real model files (tests/CMakeLists.txt's P64_SHARED_DIR).
inline std::string shared_model(const std::string& name) { return std::string(P64_SHARED_DIR) + "/models/" + name; }

}  // namespace p64::fuzz
