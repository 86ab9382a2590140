#include "engine/lab/report_scope.h"

#include <array>
#include <cctype>

namespace p64 {
namespace {

std::string letters_and_digits(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

}  // namespace

std::string model_key(std::string_view name) {
  if (const auto slash = name.find_last_of("/\\"); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  constexpr std::array<std::string_view, 4> kSuffixes{".p64", ".gguf", ".bin", ".soa"};
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view suffix : kSuffixes)
      if (ends_with_ci(name, suffix)) {
        name.remove_suffix(suffix.size());
        stripped = true;
      }
  }
  return letters_and_digits(name);
}

bool is_plan_bars_model(const ModelRecord& m) {
  const std::string plan = model_key(kPlanBarsModel);
  return model_key(m.path) == plan || model_key(m.name) == plan;
}

bool same_model(const PeerResult& peer, const ModelRecord& m) {
  const std::string key = model_key(peer.model);
  return !key.empty() && (key == model_key(m.path) || key == model_key(m.name));
}

bool same_device(std::string_view a, std::string_view b) {
  const std::string ka = letters_and_digits(a), kb = letters_and_digits(b);
  if (ka.empty() || kb.empty()) return false;
  return ka.find(kb) != std::string::npos || kb.find(ka) != std::string::npos;
}

}  // namespace p64
