#include "engine/runtime/chat_session.h"

#include <algorithm>

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

GenerateResult ChatSession::reply(const std::string& user_text, const GenerateOptions& options,
                                  const StreamFn& stream) {
  const std::vector<int32_t> prompt = session_.encode(render_prompt(user_text), /*add_special=*/true);
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

}  // namespace p64
