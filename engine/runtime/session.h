#pragma once
// A Session is one conversation with a loaded model: the backend with its KV cache, the
// tokenizer, and the tokens whose keys and values the cache holds. generate() prefills only
// what the cache does not already hold (the longest common prefix with the earlier tokens is
// reused), then decodes until a stop condition, streaming whole-UTF-8 text as it goes.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/sampler.h"
#include "engine/model/tokenizer.h"
#include "engine/runtime/backend.h"

namespace p64 {

struct SessionOptions {
  std::string backend = "auto";                  // backend registry name (auto = by rank)
  uint32_t threads = 0;                          // CPU threads; 0 = all logical cores
  // KV positions: the model's trained context, capped by this (a Llama 3 model's 131072
  // positions would need gigabytes of KV that a chat never fills).
  uint32_t max_context = 4096;
  std::map<std::string, std::string> switches;   // backend optimisation switches
};

enum class StopReason {
  EndOfGeneration,  // the model sampled an end-of-generation / end-of-turn token
  StopString,       // the text reached one of GenerateOptions::stop_strings
  MaxTokens,        // GenerateOptions::max_tokens were generated
  ContextFull,      // the KV cache has no room for the next token
  Cancelled,        // the stream callback returned false
};
const char* stop_reason_name(StopReason r);

struct GenerateOptions {
  int max_tokens = 256;             // <= 0: until a stop token or a full context
  SamplerSettings sampler;          // temperature <= 0: greedy through the backend's argmax
  bool stop_at_end_of_generation = true;  // the tokenizer's eos / eot / end-of-turn ids
  std::vector<int32_t> stop_ids;    // more ids that end the reply (a chat template's)
  std::vector<std::string> stop_strings;  // text that ends the reply (not shown)
  // Drop one leading space of the first text when the prompt ends with BOS, the way
  // SentencePiece decoders (and llama2.c's run.c) print a continuation of BOS alone.
  bool strip_space_after_bos = true;
};

// Called for every generated token with the text that became ready (may be empty while a
// UTF-8 character is incomplete or while text that could start a stop string is held back);
// once more at the end with id -1 for what was still held. Returning false cancels.
using StreamFn = std::function<bool(std::string_view text, int32_t id)>;

struct GenerateStats {
  int prompt_tokens = 0;     // tokens of the prompt given to generate()
  int reused_tokens = 0;     // of them, already in the KV cache (not prefilled again)
  int prefilled_tokens = 0;  // prompt_tokens - reused_tokens
  int generated_tokens = 0;  // tokens of the reply (a stop token is not counted)
  int decode_steps = 0;      // single-token forward passes
  double prefill_s = 0;      // the prefill forward pass (and the first sample)
  double decode_s = 0;       // all decode steps with their sampling
  double ttft_s = 0;         // from the call to the first sampled token
  double prefill_tok_s() const { return prefill_s > 0 ? prefilled_tokens / prefill_s : 0; }
  double decode_tok_s() const { return decode_s > 0 ? decode_steps / decode_s : 0; }
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // the reply's ids
  std::string text;             // the reply's text, stop string excluded
  StopReason stop = StopReason::MaxTokens;
  int32_t stop_token = -1;      // the end-of-generation id, when that is why it stopped
  GenerateStats stats;
};

// "prompt 12 tokens (0 reused), generated 64 tokens, prefill 310.2 tok/s, decode 71.5 tok/s,
// ttft 41 ms, stop: max tokens" — the one-line summary the CLI prints.
std::string format_generate_summary(const GenerateResult& r);

class Session {
 public:
  // Creates the backend by name and loads the model into it.
  static std::unique_ptr<Session> create(std::shared_ptr<const Model> model, const SessionOptions& options);
  // Over a backend that already has `model` loaded (tests, the lab).
  Session(std::shared_ptr<const Model> model, std::unique_ptr<Backend> loaded_backend);
  ~Session();

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  Backend& backend() { return *backend_; }
  uint32_t context_length() const { return backend_->max_context(); }
  // The tokens at KV positions 0..n-1, in order.
  const std::vector<int32_t>& cached_tokens() const { return cached_; }

  // Tokenizes text with the model's tokenizer: BOS (as the vocabulary asks) and special-token
  // text parsed when add_special is true.
  std::vector<int32_t> encode(std::string_view text, bool add_special) const;

  // Continues `prompt`, the whole token sequence of the conversation so far (BOS included).
  // The KV cache of an earlier call is reused up to the longest prefix `prompt` shares with
  // cached_tokens(). Throws p64::Error for an empty prompt, a prompt longer than the context
  // or an id outside the vocabulary.
  GenerateResult generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                          const StreamFn& stream = {});

  // Forgets the cached tokens (the next generate() prefills everything).
  void reset() { cached_.clear(); }

 private:
  int32_t pick(int32_t argmax_id, std::span<const float> logits, Sampler& sampler) const;

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<int32_t> cached_;
};

}  // namespace p64
