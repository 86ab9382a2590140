// p64 chat: an interactive chat in the model's template. Replies go to stdout, everything
// else (banner, notices, the per-reply summary) to stderr, so a pipe reads only the replies.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/decode_args.h"
#include "app/cli/interrupt.h"
#include "engine/common/error.h"
#include "engine/runtime/chat_session.h"

namespace p64::cli {
namespace {

constexpr const char* kHelp = "commands: /reset (forget the conversation), /system TEXT (set the system prompt; "
                              "/system alone = the template's default), /quit; Ctrl-C stops a reply, Ctrl-D leaves";

struct ChatArgs {
  DecodeArgs decode;
  std::string system;
};

// Handles a /command; returns false when the chat should end.
bool run_command(const std::string& line, ChatSession& chat) {
  const size_t space = line.find(' ');
  const std::string cmd = line.substr(0, space);
  const size_t arg = space == std::string::npos ? std::string::npos : line.find_first_not_of(' ', space);
  const std::string rest = arg == std::string::npos ? "" : line.substr(arg);
  if (cmd == "/quit" || cmd == "/exit") return false;
  if (cmd == "/reset") {
    chat.reset();
    std::fprintf(stderr, "(conversation cleared)\n");
  } else if (cmd == "/system") {
    chat.set_system(rest);
    std::fprintf(stderr, rest.empty() ? "(system prompt: the template's default)\n" : "(system prompt set)\n");
  } else {
    std::fprintf(stderr, "unknown command %s; %s\n", cmd.c_str(), kHelp);
  }
  return true;
}

void run(const ChatArgs& a) {
  OpenedSession s = open_session(a.decode);
  ChatSession chat(*s.session);
  chat.set_system(a.system);
  if (!chat.template_warning().empty()) std::fprintf(stderr, "p64 chat: %s\n", chat.template_warning().c_str());
  std::fprintf(stderr, "p64 chat: %s, template %s, backend %s, context %u positions (when full, the oldest turns go)\n%s\n",
               a.decode.model.c_str(), chat.chat_template().family_name(), s.session->backend().name().c_str(),
               s.session->context_length(), kHelp);

  GenerateOptions o;
  o.max_tokens = a.decode.tokens;
  o.sampler = a.decode.sampler;
  install_interrupt_handler();
  set_generating(false, "\n(Ctrl-C stops a reply; /quit or Ctrl-D leaves)\n");
  const bool interactive = isatty(STDIN_FILENO);
  std::string line;
  for (;;) {
    if (interactive) std::fputs("> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;  // EOF quits
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line[0] == '/') {
      if (!run_command(line, chat)) break;
      continue;
    }
    clear_interrupt();
    set_generating(true);
    try {
      bool shown = false;
      const GenerateResult r = chat.reply(line, o, [&shown](std::string_view text, int32_t) {
        // A SentencePiece reply starts with its first word's space marker; the turn does not.
        if (!shown && !text.empty() && text.front() == ' ') text.remove_prefix(1);
        shown |= !text.empty();
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return !interrupt_requested();
      });
      std::fputc('\n', stdout);
      std::fflush(stdout);
      const std::string notice = context_notice(chat.last_fit());
      if (!notice.empty()) std::fprintf(stderr, "(%s)\n", notice.c_str());
      const ChatSession::ContextUse use = chat.context_use();
      std::fprintf(stderr, "[%s; context %u/%u]\n", format_generate_summary(r).c_str(), use.used, use.length);
    } catch (const Error& e) {
      std::fprintf(stderr, "p64 chat: %s\n", e.what());
    }
    set_generating(false);
  }
}

const CommandRegistration reg(21, [](CLI::App& root) {
  auto args = std::make_shared<ChatArgs>();
  args->decode.tokens = 512;
  CLI::App* c = root.add_subcommand("chat", "Chat with a model in its chat template (/reset, /system, /quit)");
  add_decode_options(*c, args->decode);
  c->add_option("--system", args->system, "System prompt (empty: the template's default, if any)");
  c->add_option("--tokens", args->decode.tokens, "Most tokens per reply (0 = until end of turn or a full context)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 24));
  c->callback([args] { run(*args); });
});

}  // namespace
}  // namespace p64::cli
