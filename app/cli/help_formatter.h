#pragma once
#include <CLI/CLI.hpp>

namespace p64::cli {

// `p64 ... --help` shows every option's default: CLI11 prints captured defaults as NAME=VALUE;
// this adds "(default: none)" to value options that have no default and "(default: off)" to
// flags, so no option leaves the reader guessing.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* opt) const override;
};

}  // namespace p64::cli
