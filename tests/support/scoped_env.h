#pragma once
#include <cstdlib>
#include <optional>
#include <string>

namespace p64::test {

// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    put(name, value.c_str());
  }
  ~ScopedEnv() { put(name_, old_ ? old_->c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  // nullptr removes the variable. Windows (_putenv_s) removes it for "" as well.
  static void put(const char* name, const char* value) {
#ifdef _WIN32
    ::_putenv_s(name, value ? value : "");
#else
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
#endif
  }

  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace p64::test
