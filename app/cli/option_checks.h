#pragma once
// Checks for option values CLI11's own validators let through: a thread count that would start
// thousands of threads, and NaN or an infinity where a sampler setting is read (CLI::Range only
// compares, and NaN passes every comparison).
#include <limits>
#include <string>

#include <CLI/CLI.hpp>

namespace p64::cli {

// The most --threads accepts: a few threads per hardware thread. More only queue for the same
// cores, and a slip like 10000 (or 2147483648) would start that many threads.
unsigned max_threads();
// --threads from `least` to max_threads(); negative values and words are refused.
CLI::Validator thread_count(unsigned least = 0);
// The help text of a --threads option: `what` and the limit on this machine.
std::string threads_help(const std::string& what);

// A finite number above `low` (or at least `low` when `low_included`) and below `high` (or at
// most `high`); high = infinity leaves it unbounded above. "nan", "inf" and "-inf" are refused.
CLI::Validator finite_number(double low, bool low_included, double high = std::numeric_limits<double>::infinity(),
                             bool high_included = false);

// A depth list as parse_depths (engine/lab/depth_sweep.h) reads it: "0,512,4096".
CLI::Validator depth_list();

}  // namespace p64::cli
