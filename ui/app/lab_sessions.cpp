#include "ui/app/lab_sessions.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/model/model.h"

namespace p64::ui {

namespace {
std::shared_ptr<const Model> model_for(const LabRequest& r) {
  if (r.model && r.model->source() == r.model_path) return r.model;
  if (r.model_path.empty()) throw Error("no model: open a .p64 in the Models panel first");
  return open_lab_model(r.model_path, LabConfig::parse(r.config).backend);
}

// Progress of load + measurement as one bar: loading is the first 10%.
ProgressFn after_load(const ProgressFn& progress) {
  return [progress](double f, std::string_view what) { return progress ? progress(0.1 + 0.9 * f, what) : true; };
}
}  // namespace

DecodeProxyOutcome run_decode_proxy_session(const LabRequest& request, const DecodeProxyParams& params,
                                            const ProgressFn& progress) {
  const LabConfig config = LabConfig::parse(request.config);
  if (progress && !progress(0.0, "opening the model")) throw Cancelled();
  auto model = model_for(request);
  std::unique_ptr<Store> store = request.store_path.empty() ? nullptr : Store::open(request.store_path);
  if (progress && !progress(0.05, "loading the backend")) throw Cancelled();
  const uint32_t needed = static_cast<uint32_t>(std::max(0, params.prompt_tokens) + std::max(0, params.decode_tokens));
  LoadedBackend lb = load_backend(config, model, needed);
  if (store) store->sync_switches(lb.name, lb.backend->switches());

  DecodeProxyOutcome out;
  out.result = run_decode_proxy(*lb.backend, *model, lb.passport, params, after_load(progress));
  out.backend = lb.name;
  out.device = lb.passport.device.name;
  out.load_ms = lb.load_ms;
  if (store) {
    RunBundle b = begin_run_bundle(store.get(), RunKind::DecodeProxy, *model, request.model_path, lb, config);
    b.samples = out.result.samples;
    b.run.label = request.label;
    b.run.params_json = nlohmann::json{{"tokens", params.decode_tokens}, {"prompt_tokens", params.prompt_tokens},
                                       {"runs", params.runs}, {"warmup", params.warmup}, {"warm", params.warm_repeats},
                                       {"from", "p64lab"}}
                            .dump();
    b.run.summary_json = nlohmann::json(out.result).dump();
    out.run_id = store->write_run(std::move(b));
  }
  return out;
}

TimelineOutcome run_timeline_session(const LabRequest& request, const TimelineParams& params,
                                     const ProgressFn& progress) {
  const LabConfig config = LabConfig::parse(request.config);
  if (progress && !progress(0.0, "opening the model")) throw Cancelled();
  auto model = model_for(request);
  std::unique_ptr<Store> store = request.store_path.empty() ? nullptr : Store::open(request.store_path);
  if (progress && !progress(0.05, "loading the backend")) throw Cancelled();
  LoadedBackend lb = load_backend(config, model, static_cast<uint32_t>(params.prompt_tokens + params.decode_tokens + 1));
  if (store) store->sync_switches(lb.name, lb.backend->switches());

  TimelineOutcome out;
  out.result = run_timeline(*lb.backend, *model, params, after_load(progress));
  if (out.result.spans.empty())
    throw Error("timeline: backend '" + lb.name + "' reported no spans (it does not implement set_timeline)");
  out.backend = lb.name;
  out.device = lb.passport.device.name;
  if (store) {
    nlohmann::json summary = out.result.summary;
    summary["decode_wall_ms"] = out.result.decode_wall_ms;
    summary["prefill_wall_ms"] = out.result.prefill_wall_ms;
    summary["coverage"] = out.result.coverage;
    summary["tokens"] = params.decode_tokens;
    summary["prompt_tokens"] = params.prompt_tokens;
    RunBundle b = begin_run_bundle(store.get(), RunKind::Timeline, *model, request.model_path, lb, config);
    b.ops = out.result.spans;
    b.run.label = request.label;
    b.run.params_json = nlohmann::json{{"tokens", params.decode_tokens}, {"prompt_tokens", params.prompt_tokens},
                                       {"from", "p64lab"}}
                            .dump();
    b.run.summary_json = summary.dump();
    SampleRecord s;
    s.prompt_tokens = params.prompt_tokens;
    s.decode_tokens = params.decode_tokens;
    // With timing on; the decode-proxy figure (timing off) is the one to quote.
    s.decode_tok_s = out.result.decode_wall_ms > 0 ? params.decode_tokens / (out.result.decode_wall_ms / 1e3) : 0;
    s.peak_device_bytes = lb.backend->device_memory_peak();
    b.samples.push_back(s);
    out.run_id = store->write_run(std::move(b));
  }
  return out;
}

void write_chrome_trace(const std::string& path, const std::vector<OpSpan>& spans, const std::string& title) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot write the trace");
  out << chrome_trace(spans, title).dump();
  if (!out) throw Error(path + ": write failed");
}

}  // namespace p64::ui
