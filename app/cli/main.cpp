#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/help_formatter.h"
#include "app/common/register_backends.h"
#include "engine/common/error.h"
#include "engine/common/progress.h"
#include "p64/build_info.h"

namespace p64::cli {

std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}

namespace {
int g_exit_code = 0;
}
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace p64::cli

namespace {

std::string version_text() {
  std::string s = std::string("p64 ") + p64::build::version + " (git " + p64::build::git_revision + ")\nbackends: cpu";
  if (p64::build::cuda) s += " cuda";
  if (p64::build::vulkan) s += " vulkan";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  p64::register_all_backends();
  CLI::App app{"p64 — the P64 Lab command line: convert and inspect models, decode, measure, compare.", "p64"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  // Set before the subcommands exist: they copy both from the root.
  app.formatter(std::make_shared<p64::cli::HelpFormatter>());
  app.get_formatter()->column_width(34);
  app.option_defaults()->always_capture_default();
  // CLI11 reads `/name` as an option on Windows; there it is a path too (`/models/x.gguf`, the
  // current drive's root), and p64's options are spelled `--name` everywhere.
  app.allow_windows_style_options(false);
  // A bad flag reads like every other error of the command: `p64: --threads: ...`.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) { return "p64: " + CLI::FailureMessage::simple(a, e); });
  auto& cmds = p64::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& c : cmds) c.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const p64::Cancelled&) {
    std::cerr << "p64: cancelled\n";
    return 130;
  } catch (const std::bad_alloc&) {
    // Readers bound every size a file states before allocating (model_limits.h); this is the
    // last guard, and the command line names the files the command was reading.
    std::string command = "p64";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    std::cerr << "p64: error: out of memory running `" << command << "` (a file it reads may state sizes beyond this machine)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "p64: error: " << e.what() << "\n";
    return 1;
  }
  return p64::cli::exit_code();
}
