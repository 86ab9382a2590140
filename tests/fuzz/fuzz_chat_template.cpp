// Chat-template detection and rendering. The template text is model-provided data: it is
// searched, never executed. The input is "template \0 (role-byte content \0)*"; the output
// must stay within the messages plus a fixed overhead per turn, whatever the template says.
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"
#include "engine/model/chat_template.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t at = in.find('\0');
  const std::string_view templ = in.substr(0, at);
  static const char* const kRoles[] = {"system", "user", "assistant", "tool", "bad<role>", "", "user\n"};
  std::vector<p64::ChatMessage> messages;
  size_t content_bytes = 0;
  bool add_generation_prompt = false;
  while (at != std::string_view::npos && at + 1 < in.size()) {
    const uint8_t r = static_cast<uint8_t>(in[at + 1]);
    add_generation_prompt = r & 0x80;
    const size_t end = in.find('\0', at + 2);
    std::string_view content = in.substr(at + 2, end == std::string_view::npos ? std::string_view::npos : end - at - 2);
    messages.push_back({kRoles[r % 7], std::string(content)});
    content_bytes += content.size() + messages.back().role.size();
    at = end;
  }
  const p64::ChatTemplate t = p64::ChatTemplate::detect(templ);
  // The default system prompt is copied from the template, so it is bounded by it.
  if (t.default_system().size() > templ.size()) std::abort();
  try {
    const std::string out = t.render(messages, add_generation_prompt);
    const size_t bound = content_bytes + t.default_system().size() + 64 * (messages.size() + 2);
    if (out.size() > bound) std::abort();
  } catch (const p64::Error&) {
  }
  return 0;
}
