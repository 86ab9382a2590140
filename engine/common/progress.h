#pragma once
#include <functional>
#include <string_view>

namespace p64 {

// Progress of long work (convert, synth, verify, runs): fraction in [0, 1] and what is being
// done. Returning false asks the work to stop; it then throws p64::Cancelled and leaves every
// output it was writing removed or untouched.
using ProgressFn = std::function<bool(double fraction, std::string_view what)>;

struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

}  // namespace p64
