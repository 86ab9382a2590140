#pragma once
// A chat over a Session: the conversation's messages rendered with the model's chat template
// each turn. The whole history is rendered and tokenized again, and the Session reuses the KV
// cache of every token the earlier turns left in it, so a turn prefills only its new tokens.
#include <string>
#include <vector>

#include "engine/model/chat_template.h"
#include "engine/runtime/session.h"

namespace p64 {

class ChatSession {
 public:
  // The template is detected from the model's tokenizer.chat_template (docs/chat-templates.md);
  // an unknown one falls back to the plain format and template_warning() says so.
  explicit ChatSession(Session& session);

  const ChatTemplate& chat_template() const { return template_; }
  const std::string& template_warning() const { return template_.warning(); }

  // The system prompt of the next turns; empty = the template's default one (if any).
  void set_system(std::string system) { system_ = std::move(system); }
  const std::string& system() const { return system_; }

  // User and assistant turns so far (the system prompt is kept apart).
  const std::vector<ChatMessage>& history() const { return history_; }
  void set_history(std::vector<ChatMessage> history) { history_ = std::move(history); }
  // Forgets the turns (the system prompt stays) and the KV cache.
  void reset();

  // Adds the user's message, generates the assistant's reply (stopping on the template's
  // end-of-turn tokens and stop strings as well as options'), and adds the reply to the
  // history, a cancelled one included as far as it got.
  GenerateResult reply(const std::string& user_text, const GenerateOptions& options, const StreamFn& stream = {});

  // The prompt text of the conversation plus a user message, as reply() would send it.
  std::string render_prompt(const std::string& user_text) const;

 private:
  std::vector<ChatMessage> messages_with(const std::string& user_text) const;

  Session& session_;
  ChatTemplate template_;
  std::string system_;
  std::vector<ChatMessage> history_;
};

}  // namespace p64
