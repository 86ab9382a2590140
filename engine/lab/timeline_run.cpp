#include "engine/lab/timeline_run.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/op_work.h"
#include "engine/lab/store_text.h"
#include "engine/model/model.h"

namespace p64 {
namespace {

constexpr OpGroup kGroups[] = {OpGroup::Rms, OpGroup::Attn, OpGroup::Ffn, OpGroup::Logits, OpGroup::Sample, OpGroup::Other};

OpGroup group_from_name(std::string_view s) {
  for (OpGroup g : kGroups)
    if (op_group_name(g) == s) return g;
  return OpGroup::Other;
}

}  // namespace

void TimelineRecorder::on_span(const OpSpan& span) {
  std::lock_guard<std::mutex> lock(mu_);
  spans_.push_back(span);
}

std::vector<OpSpan> TimelineRecorder::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(spans_, {});
}

std::vector<OpSpan> spans_from_records(std::span<const TimelineOpRecord> records) {
  std::vector<OpSpan> out;
  out.reserve(records.size());
  for (const auto& r : records) {
    OpSpan s;
    s.name = r.name;
    s.group = group_from_name(r.group);
    s.layer = r.layer;
    s.prefill = r.prefill;
    s.step = r.step;
    s.start_us = r.start_us;
    s.dur_us = r.dur_us;
    s.bytes = r.bytes;
    s.flops = r.flops;
    out.push_back(std::move(s));
  }
  return out;
}

TimelineSummary summarize_timeline(std::span<const OpSpan> spans) {
  TimelineSummary t;
  std::set<int32_t> steps, layers;
  double group_us[6] = {};
  std::map<std::string, OpTotal> ops;
  double total_us = 0;
  int in_block = 0, decode_spans = 0;
  for (const auto& s : spans) {
    if (s.prefill) {
      t.prefill_ms += s.dur_us / 1e3;
      continue;
    }
    steps.insert(s.step);
    if (s.layer >= 0) {
      layers.insert(s.layer);
      ++in_block;
    }
    ++decode_spans;
    total_us += s.dur_us;
    group_us[static_cast<size_t>(s.group)] += s.dur_us;
    OpTotal& o = ops[s.name];
    o.name = s.name;
    o.group = std::string(op_group_name(s.group));
    o.ms += s.dur_us / 1e3;
    o.mb += static_cast<double>(s.bytes) / 1e6;
    o.mflop += s.flops / 1e6;
    ++o.count;
  }
  t.steps = static_cast<int>(steps.size());
  t.layers = static_cast<int>(layers.size());
  const double per_step = t.steps > 0 ? 1.0 / t.steps : 0.0;
  t.span_ms_per_step = total_us / 1e3 * per_step;
  for (OpGroup g : kGroups) {
    GroupSplit gs;
    gs.group = std::string(op_group_name(g));
    gs.ms = group_us[static_cast<size_t>(g)] / 1e3 * per_step;
    gs.share = total_us > 0 ? group_us[static_cast<size_t>(g)] / total_us : 0;
    t.groups.push_back(gs);
  }
  for (auto& [name, o] : ops) {
    o.share = total_us > 0 ? o.ms * 1e3 / total_us : 0;
    o.ms *= per_step;
    o.mb *= per_step;
    o.mflop *= per_step;
    o.count = t.steps > 0 ? o.count / t.steps : o.count;
    t.top_ops.push_back(o);
  }
  std::sort(t.top_ops.begin(), t.top_ops.end(), [](const OpTotal& a, const OpTotal& b) { return a.ms > b.ms; });
  if (t.steps > 0 && t.layers > 0) t.dispatches_per_layer = static_cast<double>(in_block) / (t.layers * t.steps);
  if (t.steps > 0) t.dispatches_per_step = static_cast<double>(decode_spans) / t.steps;
  t.spread = op_spread(spans).ops;
  return t;
}

TimelineResult run_timeline(Backend& backend, const Model& model, const TimelineParams& params,
                            const ProgressFn& progress) {
  if (params.decode_tokens < 1) throw Error("timeline: --tokens must be at least 1");
  const uint64_t needed = static_cast<uint64_t>(params.prompt_tokens) + params.decode_tokens;
  if (needed > backend.max_context())
    throw Error("timeline: prompt + decode = " + std::to_string(needed) + " positions exceed the KV cache of " +
                std::to_string(backend.max_context()));
  const ProxyPrompt prompt = proxy_prompt(model, params.prompt_tokens);
  using Clock = std::chrono::steady_clock;
  TimelineRecorder rec;
  TimelineResult r;

  int32_t token = backend.prefill(prompt.ids, 0);  // warm-up, untimed and unrecorded
  token = backend.decode_argmax(token, params.prompt_tokens);

  backend.set_timeline(&rec);
  try {
    auto t0 = Clock::now();
    token = backend.prefill(prompt.ids, 0);
    r.prefill_wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    t0 = Clock::now();
    for (int i = 0; i < params.decode_tokens; ++i) {
      token = backend.decode_argmax(token, params.prompt_tokens + i);
      if (progress && !progress(static_cast<double>(i + 1) / params.decode_tokens,
                                "decode step " + std::to_string(i + 1) + "/" + std::to_string(params.decode_tokens)))
        throw Cancelled();
    }
    r.decode_wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  } catch (...) {
    backend.set_timeline(nullptr);
    throw;
  }
  backend.set_timeline(nullptr);
  r.spans = rec.take();
  count_op_work(model, backend.kv_bytes_per_position(), r.spans);
  r.summary = summarize_timeline(r.spans);
  double decode_us = 0;
  for (const auto& s : r.spans)
    if (!s.prefill) decode_us += s.dur_us;
  r.coverage = r.decode_wall_ms > 0 ? decode_us / 1e3 / r.decode_wall_ms : 0;
  return r;
}

void to_json(nlohmann::json& j, const TimelineSummary& s) {
  nlohmann::json groups = nlohmann::json::array(), ops = nlohmann::json::array();
  for (const auto& g : s.groups) groups.push_back({{"group", g.group}, {"ms", g.ms}, {"share", g.share}});
  for (const auto& o : s.top_ops)
    ops.push_back({{"name", o.name}, {"group", o.group}, {"ms", o.ms}, {"count", o.count}, {"share", o.share},
                   {"mb", o.mb}, {"gbs", o.gbs()}, {"mflop", o.mflop}, {"gflops", o.gflops()}});
  j = nlohmann::json{{"steps", s.steps},
                     {"layers", s.layers},
                     {"span_ms_per_step", s.span_ms_per_step},
                     {"dispatches_per_layer", s.dispatches_per_layer},
                     {"dispatches_per_step", s.dispatches_per_step},
                     {"prefill_ms", s.prefill_ms},
                     {"groups", groups},
                     {"ops", ops},
                     {"spread", s.spread}};
}

nlohmann::json chrome_trace(std::span<const OpSpan> spans, const std::string& title) {
  // A track (tid) per phase and op group, prefill's first: "decode ATTN" beside "decode FFN" is
  // the split as nsys shows it. Metadata only for tracks that have spans.
  constexpr int kGroupCount = static_cast<int>(OpGroup::Other) + 1;
  auto tid_of = [](const OpSpan& s) { return (s.prefill ? 1 : 1 + kGroupCount) + static_cast<int>(s.group); };
  std::set<int> used;
  for (const auto& s : spans)
    if (static_cast<int>(s.group) < kGroupCount) used.insert(tid_of(s));
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", title}}}});
  for (const int tid : used) {
    const bool prefill = tid <= kGroupCount;
    const auto group = static_cast<OpGroup>(tid - (prefill ? 1 : 1 + kGroupCount));
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid},
                      {"args", {{"name", std::string(prefill ? "prefill " : "decode ") + std::string(op_group_name(group))}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
  for (const auto& s : spans) {
    if (static_cast<int>(s.group) >= kGroupCount) continue;
    nlohmann::json args = {{"step", s.step}};
    if (s.layer >= 0) args["layer"] = s.layer;
    if (s.bytes > 0) args["bytes"] = s.bytes;
    if (s.flops > 0) args["flops"] = s.flops;
    events.push_back({{"name", s.layer >= 0 ? s.name + " L" + std::to_string(s.layer) : s.name},
                      {"cat", std::string(op_group_name(s.group))},
                      {"ph", "X"},
                      {"ts", s.start_us},
                      {"dur", s.dur_us},
                      {"pid", 1},
                      {"tid", tid_of(s)},
                      {"args", args}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, std::span<const OpSpan> spans, const std::string& title,
                        const OutputPolicy& policy) {
  write_file_atomically(path, json_text(chrome_trace(spans, title)), policy);
}

}  // namespace p64
