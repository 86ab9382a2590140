// p64 generate: continue a prompt, streaming the text; a one-line summary on stderr at the end.
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/interrupt.h"
#include "engine/common/error.h"

namespace p64::cli {
namespace {

struct GenerateArgs {
  DecodeArgs decode;
  std::string prompt;
  bool no_bos = false;
};

void run(const GenerateArgs& a) {
  OpenedSession s = open_session(a.decode);
  Session& session = *s.session;
  // --no-bos follows `p64 tokenize`: no BOS and no special-token parsing in the prompt.
  const std::vector<int32_t> prompt = session.tokenizer().encode(a.prompt, !a.no_bos, !a.no_bos);
  if (prompt.empty()) throw Error("generate: the prompt gives no tokens (with --no-bos the prompt must not be empty)");

  GenerateOptions o;
  o.max_tokens = a.decode.tokens;
  o.sampler = a.decode.sampler;
  install_interrupt_handler();
  std::fputs(a.prompt.c_str(), stdout);
  std::fflush(stdout);
  const GenerateResult r = session.generate(prompt, o, [](std::string_view text, int32_t) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return !interrupt_requested();
  });
  std::fputc('\n', stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", format_generate_summary(r).c_str());
}

const CommandRegistration reg(20, [](CLI::App& root) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* c = root.add_subcommand("generate", "Continue a prompt and stream the text (summary line on stderr)");
  add_decode_options(*c, args->decode);
  c->add_option("--prompt", args->prompt, "Prompt text (empty: start from BOS alone)");
  c->add_option("--tokens", args->decode.tokens, "Most tokens to generate (0 = until a stop token or a full context)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  c->add_flag("--no-bos", args->no_bos, "Add no BOS and do not parse special-token text in the prompt");
  c->callback([args] { run(*args); });
});

}  // namespace
}  // namespace p64::cli
