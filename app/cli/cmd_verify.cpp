// p64 verify: every CRC, bound, shape and the manifold of a .p64; exit 0 when all pass, 1 if not.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "engine/format/p64_reader.h"

namespace p64::cli {
namespace {

struct VerifyArgs {
  std::string file;
  bool quiet = false;
};

void run_verify(const VerifyArgs& a) {
  int last = -1;
  ProgressFn progress;
  if (!a.quiet)
    progress = [&](double f, std::string_view) {
      const int pct = static_cast<int>(f * 100.0);
      if (pct != last) {
        last = pct;
        std::fprintf(stderr, "\rverifying %3d%%", pct);
        std::fflush(stderr);
      }
      return true;
    };
  const P64VerifyReport r = verify_p64(a.file, progress);
  if (!a.quiet) std::fprintf(stderr, "\n");
  if (r.ok) {
    std::printf("%s: OK (%u tensors, %llu bytes of tensor data, all CRC-32C match, manifold recomputed and equal)\n",
                a.file.c_str(), r.tensors_checked, static_cast<unsigned long long>(r.bytes_checked));
    set_exit_code(0);
    return;
  }
  std::printf("%s: BAD (%zu problem%s)\n", a.file.c_str(), r.problems.size(), r.problems.size() == 1 ? "" : "s");
  for (const auto& p : r.problems) std::printf("  %s\n", p.c_str());
  set_exit_code(1);
}

const CommandRegistration reg(12, [](CLI::App& root) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* c = root.add_subcommand("verify", "Check every CRC-32C, bound and shape of a .p64 (exit 0 ok, 1 bad)");
  c->add_option("file", a->file, ".p64 file")->required();
  c->add_flag("-q,--quiet", a->quiet, "no progress line")->capture_default_str();
  c->callback([a] { run_verify(*a); });
});

}  // namespace
}  // namespace p64::cli
