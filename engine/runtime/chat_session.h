#pragma once
// A chat over a Session: the conversation's messages rendered with the model's chat template
// each turn. The whole history is rendered and tokenized again, and the Session reuses the KV
// cache of every token the earlier turns left in it, so a turn prefills only its new tokens.
//
// When the context fills, the oldest whole turns go (the system prompt stays) before the next
// reply, and the shortened conversation is prefilled again; the CLI and the GUI both say so
// from last_fit(). A reply that filled the context therefore never stops the next turn.
#include <cstdint>
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

  // Positions the KV cache holds now, of the context's length (the context meter).
  struct ContextUse {
    uint32_t used = 0;
    uint32_t length = 0;
  };
  ContextUse context_use() const;

  // What the context policy did before the latest reply.
  struct ContextFit {
    int dropped_turns = 0;  // whole turns (a user message and its reply) removed, oldest first
    int prompt_tokens = 0;  // the prompt that was sent
    int reply_room = 0;     // positions it left for the reply
  };
  const ContextFit& last_fit() const { return fit_; }

  // Positions a prompt leaves free for the reply before older turns are dropped: the reply's
  // token limit, at most a quarter of the context (so a long limit does not empty the history).
  static int wanted_reply_room(int max_tokens, uint32_t context_length);

  // Adds the user's message, generates the assistant's reply (stopping on the template's
  // end-of-turn tokens and stop strings as well as options'), and adds the reply to the
  // history, a cancelled one included as far as it got. Oldest turns are dropped first when the
  // prompt would leave less than wanted_reply_room(); throws p64::Error (history unchanged) when
  // the system prompt and this message alone do not leave a position for a reply.
  GenerateResult reply(const std::string& user_text, const GenerateOptions& options, const StreamFn& stream = {});

  // The prompt text of the conversation plus a user message, as reply() would send it.
  std::string render_prompt(const std::string& user_text) const;

 private:
  std::vector<ChatMessage> messages_with(const std::string& user_text) const;
  // Drops the oldest turns until the prompt leaves `room` positions (or no turn is left);
  // returns the prompt and sets fit_.
  std::vector<int32_t> fit_prompt(const std::string& user_text, int room);

  Session& session_;
  ChatTemplate template_;
  std::string system_;
  std::vector<ChatMessage> history_;
  ContextFit fit_;
};

// What the CLI and the GUI say when the policy dropped turns ("" when it did not): "context
// full: dropped the 2 oldest turns (the system prompt stays); the prompt is now 40 tokens,
// prefilled again".
std::string context_notice(const ChatSession::ContextFit& fit);

}  // namespace p64
