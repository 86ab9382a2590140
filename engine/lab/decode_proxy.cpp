#include "engine/lab/decode_proxy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/model_flops.h"
#include "engine/model/model.h"
#include "engine/model/tokenizer.h"

namespace p64 {
namespace {

constexpr const char* kPromptText =
    "Once upon a time, in a small town by the sea, there lived a girl who loved to count the stars. "
    "Every night she climbed the hill behind her house and wrote down what she saw.";

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::vector<double> column(const std::vector<SampleRecord>& s, double SampleRecord::*field, bool warm) {
  std::vector<double> v;
  for (const auto& r : s)
    if (r.warm == warm) v.push_back(r.*field);
  return v;
}

}  // namespace

ProxyPrompt proxy_prompt(const Model& model, int n) {
  ProxyPrompt p;
  if (n <= 0) throw Error("decode-proxy: the prompt needs at least one token");
  const uint32_t vocab = model.hparams().n_vocab;
  try {
    auto tok = Tokenizer::create(model.vocab());
    std::vector<int32_t> first = tok->encode(kPromptText, /*add_special=*/true, /*parse_special=*/false);
    std::vector<int32_t> body = tok->encode(kPromptText, /*add_special=*/false, /*parse_special=*/false);
    const bool usable = !body.empty() && std::all_of(first.begin(), first.end(), [&](int32_t id) {
      return id >= 0 && static_cast<uint32_t>(id) < vocab && id != model.vocab().unk_id;
    });
    if (usable) {
      p.ids = first;
      while (static_cast<int>(p.ids.size()) < n) p.ids.insert(p.ids.end(), body.begin(), body.end());
      p.ids.resize(static_cast<size_t>(n));
      p.rule = "the model's tokenizer on a fixed English text (engine/lab/decode_proxy.cpp), repeated and cut to " +
               std::to_string(n) + " ids";
      return p;
    }
  } catch (const std::exception&) {
    // A vocabulary the tokenizer cannot serve (synthetic toy vocabularies): fixed ids below.
  }
  for (int i = 0; i < n; ++i) p.ids.push_back(static_cast<int32_t>((1 + 7919ull * static_cast<uint64_t>(i)) % vocab));
  p.rule = "fixed ids (1 + 7919 i) mod n_vocab, i = 0.." + std::to_string(n - 1);
  return p;
}

DecodeProxyResult run_decode_proxy(Backend& backend, const Model& model, const Passport& passport,
                                   const DecodeProxyParams& params, const ProgressFn& progress) {
  if (params.decode_tokens < 1) throw Error("decode-proxy: --tokens must be at least 1");
  if (params.runs < 1) throw Error("decode-proxy: --runs must be at least 1");
  if (params.warmup < 0 || params.warm_repeats < 0) throw Error("decode-proxy: negative warm-up or warm count");
  if (params.prompt_tokens < 0) throw Error("decode-proxy: negative prompt length");
  const uint64_t needed = static_cast<uint64_t>(params.prompt_tokens) + static_cast<uint64_t>(params.decode_tokens);
  if (needed > backend.max_context())
    throw Error("decode-proxy: prompt + decode = " + std::to_string(needed) + " positions exceed the backend's KV cache of " +
                std::to_string(backend.max_context()));

  DecodeProxyResult r;
  r.params = params;
  // Depth 0 prefills nothing: the first decode step reads the prompt's first id at position 0.
  const bool prefills = params.prompt_tokens > 0;
  r.prompt = proxy_prompt(model, std::max(params.prompt_tokens, 1));
  if (!prefills) r.prompt.rule = "no prefill (depth 0): decode starts at position 0 from id " +
                                 std::to_string(r.prompt.ids.front()) + ", the first of " + r.prompt.rule;
  const HParams& hp = model.hparams();
  r.weight_bytes = model.weight_bytes();
  r.kv_bytes_per_position = backend.kv_bytes_per_position();
  if (r.kv_bytes_per_position == 0) {
    r.kv_bytes_assumed = true;
    r.kv_bytes_per_position = 2ull * hp.n_layer * hp.kv_dim() * 2;  // K and V, fp16
  }
  // Step i (0-based) attends over positions 0..P+i, so the mean over N steps is P + (N+1)/2.
  const double mean_positions = params.prompt_tokens + (params.decode_tokens + 1) / 2.0;
  r.bytes_per_token = static_cast<double>(r.weight_bytes) + static_cast<double>(r.kv_bytes_per_position) * mean_positions;
  r.measured_read_gbs = passport.measured.read_gbs;
  const ModelFlops flops = model_flops(model);
  r.decode_flops_per_token = flops.decode_token(mean_positions);
  r.prefill_flops = flops.prefill(params.prompt_tokens);
  r.prefill_bytes = static_cast<double>(r.weight_bytes) +
                    static_cast<double>(r.kv_bytes_per_position) * params.prompt_tokens;
  r.compute_ceiling = live_compute_ceiling(passport);

  const int total = params.warmup + params.runs + params.warm_repeats;
  std::optional<MachineWatch> watch;
  std::optional<GpuWatch> gpu_watch;
  std::optional<DecodeEnergyMeter> energy;
  if (params.gpu.monitor) energy.emplace(*params.gpu.monitor);
  else if (params.cpu_energy.counter) energy.emplace(*params.cpu_energy.counter);
  r.energy_unavailable = params.cpu_energy.unavailable;
  std::vector<double> decode_j;
  for (int run = 0; run < total; ++run) {
    const bool is_warmup = run < params.warmup;
    if (run == params.warmup && params.machine_probe) {
      watch.emplace(params.machine_probe);
      if (params.gpu.monitor) gpu_watch.emplace(params.gpu.monitor);
    }
    const bool is_warm = run >= params.warmup + params.runs;
    const auto t0 = Clock::now();
    int32_t token = prefills ? backend.prefill(r.prompt.ids, 0) : r.prompt.ids.front();
    const double prefill_s = prefills ? seconds_since(t0) : 0.0;
    std::vector<int32_t> generated;
    if (prefills) generated.push_back(token);
    if (energy) energy->begin();
    const auto t1 = Clock::now();
    for (int i = 0; i < params.decode_tokens; ++i) {
      token = backend.decode_argmax(token, params.prompt_tokens + i);
      generated.push_back(token);
    }
    const double decode_s = seconds_since(t1);
    const double joules = energy ? energy->end(decode_s) : -1;
    if (energy && !is_warmup && !is_warm) decode_j.push_back(joules);

    SampleRecord s;
    s.rep = static_cast<int32_t>(r.samples.size());
    s.warm = is_warm;
    s.prompt_tokens = params.prompt_tokens;
    s.decode_tokens = params.decode_tokens;
    s.decode_tok_s = decode_s > 0 ? params.decode_tokens / decode_s : 0;
    s.prefill_tok_s = prefill_s > 0 ? params.prompt_tokens / prefill_s : 0;
    s.ttft_ms = prefill_s * 1e3;  // the prefill returns the first generated token's id
    s.effective_gbs = r.bytes_per_token * s.decode_tok_s / 1e9;
    s.bandwidth_share = r.measured_read_gbs > 0 ? s.effective_gbs / r.measured_read_gbs : 0;
    s.peak_device_bytes = backend.device_memory_peak();
    if (!is_warmup) {
      r.samples.push_back(s);
      r.generated = std::move(generated);
    }
    if (progress) {
      char what[160];
      std::snprintf(what, sizeof what, "%s %d/%d: decode %.1f tok/s, prefill %.1f tok/s, ttft %.1f ms",
                    is_warmup ? "warm-up" : is_warm ? "warm repeat" : "run",
                    is_warmup ? run + 1 : is_warm ? run + 1 - params.warmup - params.runs : run + 1 - params.warmup,
                    is_warmup ? params.warmup : is_warm ? params.warm_repeats : params.runs, s.decode_tok_s,
                    s.prefill_tok_s, s.ttft_ms);
      if (!progress(static_cast<double>(run + 1) / total, what)) throw Cancelled();
    }
  }

  if (watch) {
    r.machine = watch->stop();
    if (gpu_watch) r.machine.gpu = gpu_watch->stop();
    else if (params.gpu.wanted()) r.machine.gpu = unavailable_gpu(params.gpu.unavailable);
  }
  if (energy) r.energy = summarise_decode_energy(energy->source(), std::move(decode_j), params.decode_tokens);
  const auto measured = column(r.samples, &SampleRecord::decode_tok_s, false);
  r.decode_tok_s = min_median_max(measured);
  r.busy = busy_flag(r.decode_tok_s, r.machine);
  r.prefill_tok_s = min_median_max(column(r.samples, &SampleRecord::prefill_tok_s, false));
  r.ttft_ms = min_median_max(column(r.samples, &SampleRecord::ttft_ms, false));
  r.effective_gbs = min_median_max(column(r.samples, &SampleRecord::effective_gbs, false));
  r.bandwidth_share = min_median_max(column(r.samples, &SampleRecord::bandwidth_share, false));
  for (const auto& s : r.samples) r.peak_device_bytes = std::max(r.peak_device_bytes, s.peak_device_bytes);
  if (params.warm_repeats > 0) {
    r.warm_decode_tok_s = min_median_max(column(r.samples, &SampleRecord::decode_tok_s, true));
    double peak = 0;
    for (const auto& s : r.samples) peak = std::max(peak, s.decode_tok_s);
    r.warm_over_peak = peak > 0 ? r.warm_decode_tok_s.median / peak : 0;
    r.warm_within_10pct = r.warm_over_peak >= 0.9;
  }
  return r;
}

void to_json(nlohmann::json& j, const DecodeProxyResult& r) {
  j = nlohmann::json{
      {"params",
       {{"decode_tokens", r.params.decode_tokens},
        {"prompt_tokens", r.params.prompt_tokens},
        {"runs", r.params.runs},
        {"warmup", r.params.warmup},
        {"warm_repeats", r.params.warm_repeats}}},
      {"prompt", {{"rule", r.prompt.rule}, {"ids", r.prompt.ids}}},
      {"decode_tok_s", r.decode_tok_s},
      {"prefill_tok_s", r.prefill_tok_s},
      {"ttft_ms", r.ttft_ms},
      {"effective_gbs", r.effective_gbs},
      {"bandwidth_share", r.bandwidth_share},
      {"peak_device_bytes", r.peak_device_bytes},
      {"weight_bytes", r.weight_bytes},
      {"kv_bytes_per_position", r.kv_bytes_per_position},
      {"kv_bytes_assumed_fp16", r.kv_bytes_assumed},
      {"bytes_per_token", r.bytes_per_token},
      {"measured_read_gbs", r.measured_read_gbs},
      {"generated", r.generated},
      {"flops",
       {{"decode_per_token", r.decode_flops_per_token},
        {"prefill", r.prefill_flops},
        {"prefill_bytes", r.prefill_bytes},
        {"counted_from", "tensor shapes"}}},
      {"compute_ceiling", {{"flops", r.compute_ceiling.flops}, {"source", r.compute_ceiling.source}}},
      {"busy", r.busy.busy},
      {"busy_reasons", r.busy.reasons},
      {"machine", r.machine},
  };
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : r.samples)
    samples.push_back({{"rep", s.rep},
                       {"warm", s.warm},
                       {"decode_tok_s", s.decode_tok_s},
                       {"prefill_tok_s", s.prefill_tok_s},
                       {"ttft_ms", s.ttft_ms},
                       {"effective_gbs", s.effective_gbs},
                       {"bandwidth_share", s.bandwidth_share},
                       {"peak_device_bytes", s.peak_device_bytes}});
  j["samples"] = samples;
  if (r.energy) j["energy"] = *r.energy;
  if (!r.energy_unavailable.empty()) j["energy_unavailable"] = r.energy_unavailable;
  if (r.params.warm_repeats > 0)
    j["warm"] = {{"decode_tok_s", r.warm_decode_tok_s},
                 {"steady_over_peak", r.warm_over_peak},
                 {"within_10pct_of_peak", r.warm_within_10pct}};
}

std::string format_min_median_max(const MinMedianMax& m, int precision) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.*f [%.*f-%.*f] ± %.*f (CV %.1f%%)", precision, m.median, precision, m.min,
                precision, m.max, precision, m.stddev, 100 * m.cv);
  return buf;
}

}  // namespace p64
