#include "engine/model/chat_template.h"

#include <algorithm>

#include "engine/common/error.h"

namespace p64 {
namespace {

bool has(std::string_view text, std::string_view marker) { return text.find(marker) != std::string_view::npos; }

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return std::string();
  const size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

// A default system prompt the template writes as a literal ("<|im_start|>system\nYou are
// ...<|im_end|>"). Only plain text counts: anything with Jinja syntax or quotes is left alone.
std::string literal_default_system(std::string_view tmpl) {
  const std::string_view open = "<|im_start|>system";
  size_t at = tmpl.find(open);
  while (at != std::string_view::npos) {
    size_t p = at + open.size();
    if (tmpl.substr(p, 1) == "\n")
      p += 1;
    else if (tmpl.substr(p, 2) == "\\n")
      p += 2;
    else {
      at = tmpl.find(open, p);
      continue;
    }
    const size_t end = tmpl.find("<|im_end|>", p);
    if (end == std::string_view::npos || end - p > 2000) break;
    std::string_view body = tmpl.substr(p, end - p);
    if (!body.empty() && body.find_first_of("{}'\"+") == std::string_view::npos) {
      std::string out;
      for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\' && i + 1 < body.size() && body[i + 1] == 'n') {
          out += '\n';
          ++i;
        } else {
          out += body[i];
        }
      }
      return out;
    }
    at = tmpl.find(open, end);
  }
  return std::string();
}

void require_role(const ChatMessage& m, const char* family) {
  if (m.role != "system" && m.role != "user" && m.role != "assistant")
    throw Error(std::string("chat template ") + family + ": role \"" + m.role +
                "\" is not one of system, user, assistant");
}

}  // namespace

ChatTemplate ChatTemplate::for_family(ChatFamily family) {
  ChatTemplate t;
  t.family_ = family;
  switch (family) {
    case ChatFamily::Llama3: t.end_of_turn_ = {"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>"}; break;
    case ChatFamily::ChatML: t.end_of_turn_ = {"<|im_end|>", "<|endoftext|>"}; break;
    case ChatFamily::Llama2:
    case ChatFamily::Mistral:
    case ChatFamily::Zephyr: t.end_of_turn_ = {"</s>"}; break;
    case ChatFamily::Gemma: t.end_of_turn_ = {"<end_of_turn>", "<eos>"}; break;
    case ChatFamily::Phi3: t.end_of_turn_ = {"<|end|>", "<|endoftext|>"}; break;
    case ChatFamily::Plain: t.stop_strings_ = {"\nUser:"}; break;
  }
  return t;
}

ChatTemplate ChatTemplate::detect(std::string_view tmpl) {
  ChatTemplate t;
  // Most specific markers first: a Phi-3 template also has <|user|>, a Llama 2 one also [INST].
  if (has(tmpl, "<|start_header_id|>") && has(tmpl, "<|end_header_id|>")) {
    t = for_family(ChatFamily::Llama3);
  } else if (has(tmpl, "<|im_start|>")) {
    t = for_family(ChatFamily::ChatML);
    t.default_system_ = literal_default_system(tmpl);
  } else if (has(tmpl, "<start_of_turn>")) {
    t = for_family(ChatFamily::Gemma);
  } else if (has(tmpl, "<|user|>") && has(tmpl, "<|end|>")) {
    t = for_family(ChatFamily::Phi3);
  } else if (has(tmpl, "<|user|>")) {
    t = for_family(ChatFamily::Zephyr);
  } else if (has(tmpl, "[INST]") && has(tmpl, "<<SYS>>")) {
    t = for_family(ChatFamily::Llama2);
  } else if (has(tmpl, "[INST]")) {
    t = for_family(ChatFamily::Mistral);
  } else {
    t = for_family(ChatFamily::Plain);
    t.warning_ = tmpl.empty()
                     ? "the model has no chat template; using the plain \"User:/Assistant:\" format (replies may be poor)"
                     : "the model's chat template is not one this build recognises (see docs/chat-templates.md); "
                       "using the plain \"User:/Assistant:\" format (replies may be poor)";
  }
  return t;
}

const char* ChatTemplate::family_name() const {
  switch (family_) {
    case ChatFamily::Llama3: return "llama3";
    case ChatFamily::Llama2: return "llama2";
    case ChatFamily::ChatML: return "chatml";
    case ChatFamily::Mistral: return "mistral";
    case ChatFamily::Zephyr: return "zephyr";
    case ChatFamily::Gemma: return "gemma";
    case ChatFamily::Phi3: return "phi3";
    case ChatFamily::Plain: return "plain";
  }
  return "plain";
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, bool add_generation_prompt) const {
  std::string out;
  size_t budget = 64;
  for (const auto& m : messages) budget += m.content.size() + m.role.size() + 64;
  out.reserve(budget + default_system_.size());

  // System text for families that fold it into the first user turn.
  std::string system;
  auto first_user_prefix = [&](const std::string& sep) {
    std::string p = system.empty() ? std::string() : system + sep;
    system.clear();
    return p;
  };

  switch (family_) {
    case ChatFamily::Llama3:
      for (const auto& m : messages) {
        if (m.role.empty() || m.role.find_first_of("<>\n") != std::string::npos)
          throw Error("chat template llama3: bad role \"" + m.role + "\"");
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      }
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;

    case ChatFamily::ChatML:
      if (!default_system_.empty() && (messages.empty() || messages.front().role != "system"))
        out += "<|im_start|>system\n" + default_system_ + "<|im_end|>\n";
      for (const auto& m : messages) {
        if (m.role.empty() || m.role.find_first_of("<>\n") != std::string::npos)
          throw Error("chat template chatml: bad role \"" + m.role + "\"");
        out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      }
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;

    case ChatFamily::Llama2: {
      // Meta's format: each exchange is BOS "[INST] user [/INST] answer " EOS; the system
      // prompt sits in <<SYS>> inside the first user turn. The very first BOS is the tokenizer's.
      bool first = true;
      for (const auto& m : messages) {
        require_role(m, "llama2");
        if (m.role == "system") {
          system = "<<SYS>>\n" + trim(m.content) + "\n<</SYS>>\n\n";
        } else if (m.role == "user") {
          out += std::string(first ? "" : "<s>") + "[INST] " + first_user_prefix("") + trim(m.content) + " [/INST]";
          first = false;
        } else {
          out += " " + trim(m.content) + " </s>";
        }
      }
      break;
    }

    case ChatFamily::Mistral:
      // Mistral Instruct v0.1/v0.2: "[INST] user [/INST]answer</s>"; a system prompt is put
      // before the first user message, separated by a blank line (what later Mistral templates do).
      for (const auto& m : messages) {
        require_role(m, "mistral");
        if (m.role == "system")
          system = trim(m.content);
        else if (m.role == "user")
          out += "[INST] " + first_user_prefix("\n\n") + m.content + " [/INST]";
        else
          out += m.content + "</s>";
      }
      break;

    case ChatFamily::Zephyr:
    case ChatFamily::Phi3: {
      const char* end = family_ == ChatFamily::Zephyr ? "</s>" : "<|end|>";
      for (const auto& m : messages) {
        require_role(m, family_name());
        out += "<|" + m.role + "|>\n" + m.content + end + "\n";
      }
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    }

    case ChatFamily::Gemma:
      // Gemma has no system role: the system text opens the first user turn.
      for (const auto& m : messages) {
        require_role(m, "gemma");
        if (m.role == "system")
          system = trim(m.content);
        else
          out += std::string("<start_of_turn>") + (m.role == "user" ? "user" : "model") + "\n" +
                 (m.role == "user" ? first_user_prefix("\n\n") : std::string()) + trim(m.content) + "<end_of_turn>\n";
      }
      if (add_generation_prompt) out += "<start_of_turn>model\n";
      break;

    case ChatFamily::Plain:
      for (const auto& m : messages) {
        require_role(m, "plain");
        if (m.role == "system")
          out += trim(m.content) + "\n\n";
        else
          out += std::string(m.role == "user" ? "User: " : "Assistant: ") + trim(m.content) + "\n";
      }
      if (add_generation_prompt) out += "Assistant:";
      break;
  }
  return out;
}

std::vector<int32_t> ChatTemplate::end_of_turn_ids(const Vocabulary& vocab) const {
  std::vector<int32_t> ids;
  for (int32_t id : {vocab.eos_id, vocab.eot_id})
    if (id >= 0) ids.push_back(id);
  for (size_t i = 0; i < vocab.tokens.size(); ++i)
    if (std::find(end_of_turn_.begin(), end_of_turn_.end(), vocab.tokens[i]) != end_of_turn_.end())
      ids.push_back(static_cast<int32_t>(i));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace p64
