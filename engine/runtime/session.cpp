#include "engine/runtime/session.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "engine/common/error.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Holds back the tail of the reply that could be the start of a stop string, so a stop
// string is never shown in part; finds a complete one and cuts the reply there.
class StopText {
 public:
  explicit StopText(const std::vector<std::string>& stops) : stops_(stops) {}

  // Adds decoded text; returns what may be shown now. Sets *stopped when a stop string is complete.
  std::string push(std::string_view text, bool* stopped) {
    held_ += text;
    size_t cut = std::string::npos;
    for (const std::string& s : stops_)
      if (!s.empty()) cut = std::min(cut, held_.find(s));
    if (cut != std::string::npos) {
      *stopped = true;
      std::string out = held_.substr(0, cut);
      held_.clear();
      return out;
    }
    size_t keep = 0;  // longest tail of held_ that is a proper prefix of a stop string
    for (const std::string& s : stops_)
      for (size_t n = std::min(s.size() - (s.empty() ? 0 : 1), held_.size()); n > keep; --n)
        if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
          keep = n;
          break;
        }
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
  }
  std::string flush() { return std::exchange(held_, {}); }

 private:
  const std::vector<std::string>& stops_;
  std::string held_;
};

}  // namespace

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::EndOfGeneration: return "end of generation";
    case StopReason::StopString: return "stop string";
    case StopReason::MaxTokens: return "max tokens";
    case StopReason::ContextFull: return "context full";
    case StopReason::Cancelled: return "cancelled";
  }
  return "?";
}

std::string format_generate_summary(const GenerateResult& r) {
  const GenerateStats& s = r.stats;
  char line[320];
  std::snprintf(line, sizeof line,
                "prompt %d tokens (%d reused), generated %d tokens, prefill %.1f tok/s, decode %.1f tok/s, "
                "ttft %.0f ms, stop: %s",
                s.prompt_tokens, s.reused_tokens, s.generated_tokens, s.prefill_tok_s(), s.decode_tok_s(),
                s.ttft_s * 1e3, stop_reason_name(r.stop));
  return line;
}

std::unique_ptr<Session> Session::create(std::shared_ptr<const Model> model, const SessionOptions& options) {
  if (!model) throw Error("session: no model");
  std::unique_ptr<Backend> backend = create_backend_for(options.backend, *model);
  BackendOptions bo;
  bo.switches = options.switches;
  bo.threads = options.threads;
  bo.max_context = options.max_context;  // the backend caps it by the model's n_ctx_train
  backend->load(model, bo);
  return std::make_unique<Session>(std::move(model), std::move(backend));
}

Session::Session(std::shared_ptr<const Model> model, std::unique_ptr<Backend> loaded_backend)
    : model_(std::move(model)), backend_(std::move(loaded_backend)), tokenizer_(Tokenizer::create(model_->vocab(), model_->source())) {
  if (backend_->max_context() == 0) throw Error("session: the backend has no KV cache (load() not called?)");
}

Session::~Session() = default;

std::vector<int32_t> Session::encode(std::string_view text, bool add_special) const {
  return tokenizer_->encode(text, add_special, add_special);
}

int32_t Session::pick(int32_t argmax_id, std::span<const float> logits, Sampler& sampler) const {
  if (sampler.greedy()) return argmax_id;
  return sampler.sample(logits, cached_);  // the sampler looks at its repeat_last_n window of these
}

GenerateResult Session::generate(std::span<const int32_t> prompt, const GenerateOptions& options,
                                 const StreamFn& stream) {
  const auto t_start = Clock::now();
  const uint32_t n_ctx = context_length();
  if (prompt.empty()) throw Error("generate: the prompt has no tokens (a model needs at least BOS to start from)");
  if (prompt.size() > n_ctx)
    throw Error("generate: the prompt has " + std::to_string(prompt.size()) + " tokens, more than the context of " +
                std::to_string(n_ctx) + " positions");
  for (int32_t id : prompt)
    if (!tokenizer_->is_valid(id) || static_cast<uint32_t>(id) >= model_->hparams().n_vocab)
      throw Error("generate: token id " + std::to_string(id) + " is outside the vocabulary");

  // Reuse the cache up to the common prefix, but run at least the prompt's last token: its
  // logits are what the first reply token is sampled from.
  size_t reuse = 0;
  while (reuse < cached_.size() && reuse + 1 < prompt.size() && cached_[reuse] == prompt[reuse]) ++reuse;
  cached_.resize(reuse);  // positions from `reuse` on are overwritten below

  GenerateResult r;
  GenerateStats& st = r.stats;
  st.prompt_tokens = static_cast<int>(prompt.size());
  st.reused_tokens = static_cast<int>(reuse);
  st.prefilled_tokens = static_cast<int>(prompt.size() - reuse);

  Sampler sampler(options.sampler);
  const auto is_stop = [&](int32_t id) {
    return (options.stop_at_end_of_generation && tokenizer_->is_end_of_generation(id)) ||
           std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end();
  };

  // prefill of the tokens the cache does not hold
  const auto t_prefill = Clock::now();
  const std::span<const int32_t> fresh = prompt.subspan(reuse);
  int32_t next = backend_->prefill(fresh, static_cast<int32_t>(reuse));
  cached_.insert(cached_.end(), fresh.begin(), fresh.end());
  next = pick(next, sampler.greedy() ? std::span<const float>{} : backend_->logits(), sampler);
  const auto t_first = Clock::now();
  st.prefill_s = seconds_between(t_prefill, t_first);
  st.ttft_s = seconds_between(t_start, t_first);

  // decode loop: show the sampled token, check the stop conditions, feed it back
  const bool strip = options.strip_space_after_bos && tokenizer_->kind() == TokenizerKind::SentencePiece &&
                     prompt.back() == tokenizer_->bos();
  StreamDecoder decoder(*tokenizer_, strip);
  StopText stop_text(options.stop_strings);
  bool cancelled = false, stopped_by_text = false;
  auto emit = [&](const std::string& text, int32_t id) {
    r.text += text;
    if (stream && !cancelled && !stream(text, id)) cancelled = true;
  };
  double decode_s = 0;
  for (;;) {
    if (is_stop(next)) {
      r.stop = StopReason::EndOfGeneration;
      r.stop_token = next;
      break;
    }
    r.tokens.push_back(next);
    emit(stop_text.push(decoder.push(next), &stopped_by_text), next);
    if (stopped_by_text) {
      r.stop = StopReason::StopString;
      break;
    }
    if (cancelled) {
      r.stop = StopReason::Cancelled;
      break;
    }
    if (options.max_tokens > 0 && static_cast<int>(r.tokens.size()) >= options.max_tokens) {
      r.stop = StopReason::MaxTokens;
      break;
    }
    if (cached_.size() >= n_ctx) {
      r.stop = StopReason::ContextFull;
      break;
    }
    const auto t0 = Clock::now();
    const int32_t pos = static_cast<int32_t>(cached_.size());
    const int32_t fed = next;
    if (sampler.greedy()) {
      next = backend_->decode_argmax(fed, pos);
      cached_.push_back(fed);
    } else {
      const std::span<const float> logits = backend_->decode_logits(fed, pos);
      cached_.push_back(fed);
      next = pick(-1, logits, sampler);
    }
    decode_s += seconds_between(t0, Clock::now());
    ++st.decode_steps;
  }
  // What the decoders still hold (an unfinished character becomes U+FFFD).
  std::string rest;
  if (!stopped_by_text) {
    rest = stop_text.push(decoder.flush(), &stopped_by_text);
    if (stopped_by_text) r.stop = StopReason::StopString;
    else rest += stop_text.flush();
  }
  emit(rest, -1);
  st.decode_s = decode_s;
  st.generated_tokens = static_cast<int>(r.tokens.size());
  return r;
}

}  // namespace p64
