#include "engine/lab/depth_sweep.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/common/text.h"
#include "engine/model/model.h"

namespace p64 {

std::vector<int> parse_depths(std::string_view text) {
  const std::string all(text);
  if (trim_blanks(text).empty()) throw Error("no depth given (a list such as 0,512,4096)");
  std::vector<int> depths;
  for (size_t item = 1;; ++item) {
    const size_t comma = text.find(',');
    const std::string_view piece = trim_blanks(text.substr(0, comma));
    const std::string what = "item " + std::to_string(item) + " of '" + all + "'";
    if (piece.empty()) throw Error(what + " is empty");
    long long v = 0;
    const auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), v);
    if (ec != std::errc() || end != piece.data() + piece.size() || v > INT32_MAX)
      throw Error(what + " ('" + std::string(piece) + "') is not a whole number of tokens");
    if (v < 0) throw Error(what + " (" + std::to_string(v) + ") is negative: a depth is the tokens prefilled before decode, 0 or more");
    if (std::find(depths.begin(), depths.end(), v) != depths.end())
      throw Error(what + ": depth " + std::to_string(v) + " is given twice");
    depths.push_back(static_cast<int>(v));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return depths;
}

void check_depth_sweep(const std::vector<int>& depths, int decode_tokens, const Model& model,
                       std::string_view model_path) {
  if (depths.empty()) throw Error("decode-proxy: a depth sweep needs at least one depth");
  for (int d : depths)
    if (d < 0) throw Error("decode-proxy: depth " + std::to_string(d) + " is negative");
  const uint32_t context = model.hparams().n_ctx_train;
  if (context == 0) return;  // the model states none: the backend's KV cache is the limit
  const int deepest = *std::max_element(depths.begin(), depths.end());
  const uint64_t needed = static_cast<uint64_t>(deepest) + static_cast<uint64_t>(std::max(decode_tokens, 0));
  if (needed > context)
    throw Error("decode-proxy: --depth " + std::to_string(deepest) + " + --tokens " + std::to_string(decode_tokens) +
                " = " + std::to_string(needed) + " positions exceed the context of " + std::string(model_path) +
                " (n_ctx_train " + std::to_string(context) + "); the deepest depth can be at most " +
                std::to_string(context > static_cast<uint32_t>(decode_tokens) ? context - decode_tokens : 0));
}

std::optional<int> stored_depth(const std::string& params_json) {
  const auto p = nlohmann::json::parse(params_json, nullptr, false);
  if (!p.is_object() || !p.contains("depth") || !p["depth"].is_number_integer()) return std::nullopt;
  return p["depth"].get<int>();
}

}  // namespace p64
