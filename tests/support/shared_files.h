#pragma once
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.h"

namespace p64::test {

// ../shared beside the checkout (models/, peers/); tests read real files from here.
// The environment variable P64_SHARED_DIR overrides the build-time path (the GPU machine
// has no ../shared; files are carried there).
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("P64_SHARED_DIR"); env && *env) return std::filesystem::path(env);
  return std::filesystem::path(P64_SHARED_DIR);
}
inline std::filesystem::path shared_model(const std::string& name) { return shared_dir() / "models" / name; }

// The message of the p64::Error that `f` throws; "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// The names of the entries in `dir`, sorted: what a command left behind.
inline std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

// A fresh temporary folder per test, removed at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes `text` to the file `name` in `dir` and returns its path.
std::string write_file(const TempDir& dir, const std::string& name, const std::string& text);

}  // namespace p64::test
