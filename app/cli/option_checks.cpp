#include "app/cli/option_checks.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine/common/error.h"
#include "engine/lab/depth_sweep.h"

namespace p64::cli {
namespace {

constexpr unsigned kThreadsPerHardwareThread = 4;

std::string number_text(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

unsigned max_threads() { return kThreadsPerHardwareThread * std::max(1u, std::thread::hardware_concurrency()); }

CLI::Validator thread_count(unsigned least) {
  const unsigned most = max_threads();
  const std::string range = std::to_string(least) + " to " + std::to_string(most);
  return CLI::Validator(
      [least, most](std::string& text) -> std::string {
        long long n = 0;
        if (!CLI::detail::lexical_cast(text, n)) return text + " is not a whole number";
        if (n < static_cast<long long>(least) || n > static_cast<long long>(most))
          return text + " is not between " + std::to_string(least) + " and " + std::to_string(most) + " (" +
                 std::to_string(kThreadsPerHardwareThread) + " per hardware thread)";
        return {};
      },
      range);
}

std::string threads_help(const std::string& what) {
  return what + "; at most " + std::to_string(max_threads()) + " (" + std::to_string(kThreadsPerHardwareThread) +
         " per hardware thread)";
}

CLI::Validator finite_number(double low, bool low_included, double high, bool high_included) {
  std::string range;
  if (std::isinf(high))
    range = (low_included ? ">= " : "> ") + number_text(low);
  else
    range = (low_included ? "in [" : "in (") + number_text(low) + ", " + number_text(high) + (high_included ? "]" : ")");
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return text + " is not a number";
        if (!std::isfinite(v)) return text + " is not a finite number";
        const bool above_low = low_included ? v >= low : v > low;
        const bool below_high = high_included ? v <= high : v < high;
        if (!above_low || !below_high) return text + " is not " + range;
        return {};
      },
      range);
}

CLI::Validator depth_list() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          parse_depths(text);
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "DEPTH,...");
}

}  // namespace p64::cli
