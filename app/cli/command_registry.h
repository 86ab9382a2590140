#pragma once
#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace p64::cli {

// Each subcommand lives in its own cmd_*.cpp and registers itself with a static
// CommandRegistration; main() adds them to the root app in `order`.
struct Command {
  int order;  // position in `p64 --help`
  std::function<void(CLI::App& root)> add;
};

std::vector<Command>& commands();

struct CommandRegistration {
  CommandRegistration(int order, std::function<void(CLI::App&)> add) { commands().push_back({order, std::move(add)}); }
};

// A subcommand's callback sets the process exit code this way (e.g. verify: 1 on a bad CRC).
void set_exit_code(int code);
int exit_code();

}  // namespace p64::cli
