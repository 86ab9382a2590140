#pragma once
// A depth sweep, as llama-bench's -d: decode measured after a prefill of each depth, because the
// KV bytes a decode step reads grow with the context and a short-prompt figure hides that. The
// depth is the number of positions filled before the first timed decode step (0: decode starts
// at position 0 with nothing prefilled).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace p64 {

class Model;

// "0,512,4096" -> {0, 512, 4096}, in the order given. Throws p64::Error naming the item on an
// empty list or item, a word, a negative depth or one given twice; the message leaves the flag or
// field to the caller ("p64: --depth: item 2 of '0,,512' is empty").
std::vector<int> parse_depths(std::string_view text);

// Refuses a sweep whose deepest depth plus `decode_tokens` runs past the model's context
// (n_ctx_train, when the model states one), naming the user's model file and the limit.
void check_depth_sweep(const std::vector<int>& depths, int decode_tokens, const Model& model,
                       std::string_view model_path);

// The depth a sweep's run stored in its params_json ("depth"); nullopt for a run of no sweep (or
// text that is not a JSON object).
std::optional<int> stored_depth(const std::string& params_json);

}  // namespace p64
