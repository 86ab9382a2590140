#include "engine/runtime/chat_session.h"

#include <algorithm>

#include "engine/common/error.h"

namespace p64 {

ChatSession::ChatSession(Session& session)
    : session_(session), template_(ChatTemplate::detect(session.model().vocab().chat_template)) {}

void ChatSession::reset() {
  history_.clear();
  session_.reset();
}

std::vector<ChatMessage> ChatSession::messages_with(const std::string& user_text) const {
  std::vector<ChatMessage> m;
  // An empty system prompt leaves the template's own default (render() adds it).
  if (!system_.empty()) m.push_back({"system", system_});
  m.insert(m.end(), history_.begin(), history_.end());
  m.push_back({"user", user_text});
  return m;
}

std::string ChatSession::render_prompt(const std::string& user_text) const {
  return template_.render(messages_with(user_text), /*add_generation_prompt=*/true);
}

ChatSession::ContextUse ChatSession::context_use() const {
  return {static_cast<uint32_t>(session_.cached_tokens().size()), session_.context_length()};
}

int ChatSession::wanted_reply_room(int max_tokens, uint32_t context_length) {
  const int quarter = static_cast<int>(std::max<uint32_t>(context_length / 4, 1));
  return max_tokens > 0 ? std::min(max_tokens, quarter) : quarter;
}

std::vector<int32_t> ChatSession::fit_prompt(const std::string& user_text, int room) {
  const size_t n_ctx = session_.context_length();
  fit_ = {};
  std::vector<int32_t> prompt = session_.encode(render_prompt(user_text), /*add_special=*/true);
  while (prompt.size() + static_cast<size_t>(room) > n_ctx && !history_.empty()) {
    // A whole turn: the user's message with every reply after it (a regenerated one too).
    size_t end = 1;
    while (end < history_.size() && history_[end].role != "user") ++end;
    history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(end));
    ++fit_.dropped_turns;
    prompt = session_.encode(render_prompt(user_text), /*add_special=*/true);
  }
  if (prompt.size() >= n_ctx)
    throw Error("the message is " + std::to_string(prompt.size()) + " tokens with the system prompt and the chat " +
                "template, and the context holds " + std::to_string(n_ctx) +
                " positions: shorten the message or the system prompt");
  fit_.prompt_tokens = static_cast<int>(prompt.size());
  fit_.reply_room = static_cast<int>(n_ctx - prompt.size());
  return prompt;
}

GenerateResult ChatSession::reply(const std::string& user_text, const GenerateOptions& options,
                                  const StreamFn& stream) {
  // Dropped turns are gone only once the message is known to fit.
  std::vector<ChatMessage> before = history_;
  std::vector<int32_t> prompt;
  try {
    prompt = fit_prompt(user_text, wanted_reply_room(options.max_tokens, session_.context_length()));
  } catch (...) {
    history_ = std::move(before);
    fit_ = {};
    throw;
  }
  GenerateOptions o = options;
  for (int32_t id : template_.end_of_turn_ids(session_.model().vocab()))
    if (std::find(o.stop_ids.begin(), o.stop_ids.end(), id) == o.stop_ids.end()) o.stop_ids.push_back(id);
  for (const std::string& s : template_.stop_strings()) o.stop_strings.push_back(s);
  o.strip_space_after_bos = false;
  GenerateResult r = session_.generate(prompt, o, stream);
  history_.push_back({"user", user_text});
  // SentencePiece replies begin with the word's space marker; the turn's content does not.
  std::string content = r.text;
  if (!content.empty() && content.front() == ' ') content.erase(0, 1);
  history_.push_back({"assistant", std::move(content)});
  return r;
}

std::string context_notice(const ChatSession::ContextFit& fit) {
  if (fit.dropped_turns == 0) return {};
  const std::string turns = fit.dropped_turns == 1 ? "the oldest turn" : "the " + std::to_string(fit.dropped_turns) + " oldest turns";
  return "context full: dropped " + turns + " (the system prompt stays); the prompt is now " +
         std::to_string(fit.prompt_tokens) + " tokens, prefilled again";
}

}  // namespace p64
