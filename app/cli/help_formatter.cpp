#include "app/cli/help_formatter.h"

namespace p64::cli {

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  std::string desc = CLI::Formatter::make_option_desc(opt);
  if (opt->get_required()) return desc;
  const bool is_flag = opt->get_expected_max() == 0;
  if (is_flag) {
    if (opt->check_lname("help") || opt->check_lname("version") || opt->check_lname("help-all")) return desc;
    return desc + " (default: off)";
  }
  if (opt->get_default_str().empty()) return desc + " (default: none)";
  return desc;
}

}  // namespace p64::cli
