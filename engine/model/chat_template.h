#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/vocab.h"

namespace p64 {

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;
};

enum class ChatFamily { Llama3, Llama2, ChatML, Mistral, Zephyr, Gemma, Phi3, Plain };

// A chat format recognised from the model's chat template (GGUF tokenizer.chat_template).
// The template text is data: it is searched for the markers of known families and never
// executed, so a hostile template cannot loop or grow the output; render() writes the
// family's format itself, and its output is the messages plus a fixed overhead per turn.
// See docs/chat-templates.md for the markers and the fallback.
class ChatTemplate {
 public:
  // Detects the family by markers in template_text. Unknown or empty text gives the Plain
  // fallback ("User: ...\nAssistant:") with warning() saying so; a caller shows it.
  static ChatTemplate detect(std::string_view template_text);
  static ChatTemplate for_family(ChatFamily family);

  ChatFamily family() const { return family_; }
  const char* family_name() const;
  const std::string& warning() const { return warning_; }

  // The prompt text for the conversation. It never begins with BOS: encode it with
  // add_special = true (the tokenizer adds BOS as the vocabulary asks) and parse_special =
  // true (so the markers become their control tokens). add_generation_prompt ends it with
  // the opening of an assistant turn. Throws p64::Error for a role the family cannot hold.
  std::string render(std::span<const ChatMessage> messages, bool add_generation_prompt) const;

  // Token strings that end an assistant turn in this family ("<|eot_id|>", "<|im_end|>", "</s>").
  const std::vector<std::string>& end_of_turn_tokens() const { return end_of_turn_; }
  // Their ids in a vocabulary (the ones it has), plus its eos.
  std::vector<int32_t> end_of_turn_ids(const Vocabulary& vocab) const;
  // Plain text that ends a turn when no token does (the fallback: "\nUser:").
  const std::vector<std::string>& stop_strings() const { return stop_strings_; }
  // A default system prompt written literally in the template (SmolLM2, Qwen2.5), used when
  // the conversation has none; "" when the template has none.
  const std::string& default_system() const { return default_system_; }

 private:
  ChatFamily family_ = ChatFamily::Plain;
  std::string warning_;
  std::string default_system_;
  std::vector<std::string> end_of_turn_;
  std::vector<std::string> stop_strings_;
};

}  // namespace p64
