#include "engine/lab/experiment.h"

#include <algorithm>
#include <cstdint>

#include "engine/common/error.h"
#include "engine/lab/depth_sweep.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"
#include "engine/model/model.h"
#include "engine/runtime/backend_registry.h"

namespace p64 {
namespace {

void step(const ProgressFn& progress, double fraction, std::string_view what) {
  if (progress && !progress(fraction, what)) throw Cancelled();
}

// The request's open model when it is that file; else the file opened (converted first when it
// is not a .p64) for `backend`.
std::shared_ptr<const Model> model_for(const std::string& path, const std::shared_ptr<const Model>& open,
                                       const std::string& backend, const std::string& tokenizer,
                                       const ProgressFn& convert) {
  if (open && open->source() == path) return open;
  if (path.empty()) throw Error("no model: the experiment names no model file");
  return open_lab_model(path, backend, tokenizer, convert);
}

std::unique_ptr<Store> open_store(const std::string& path) { return path.empty() ? nullptr : Store::open(path); }

nlohmann::json run_params(const ExperimentRequest& r) {
  nlohmann::json p = {{"tokens", r.decode_tokens}, {"prompt_tokens", r.prompt_tokens}};
  if (r.measurement == Measurement::DecodeProxy) {
    p["runs"] = r.runs;
    p["warmup"] = r.warmup;
    p["warm"] = r.warm_repeats;
  }
  if (!r.origin.empty()) p["from"] = r.origin;
  return p;
}

DecodeProxyParams proxy_params(const ExperimentRequest& r, int prompt_tokens, const GpuSource& gpu,
                               const CpuEnergySource& cpu_energy) {
  DecodeProxyParams p;
  p.decode_tokens = r.decode_tokens;
  p.prompt_tokens = prompt_tokens;
  p.runs = r.runs;
  p.warmup = r.warmup;
  p.warm_repeats = r.warm_repeats;
  p.machine_probe = r.machine_probe;
  p.gpu = gpu;
  p.cpu_energy = cpu_energy;
  return p;
}

// Depth k of n as its share of one progress bar, its lines prefixed with the depth.
ProgressFn depth_progress(const ProgressFn& measure, size_t k, size_t n, int depth) {
  if (!measure) return {};
  return [measure, k, n, depth](double f, std::string_view what) {
    return measure((static_cast<double>(k) + f) / static_cast<double>(n),
                   "depth " + std::to_string(depth) + ": " + std::string(what));
  };
}

int64_t store_run(Store& store, RunBundle b, const ExperimentRequest& r, const nlohmann::json& params,
                  const nlohmann::json& summary) {
  b.run.label = r.label;
  b.run.params_json = params.dump();
  b.run.summary_json = summary.dump();
  return store.write_run(std::move(b));
}

nlohmann::json timeline_summary(const TimelineResult& t, const ExperimentRequest& r) {
  nlohmann::json s = t.summary;
  s["decode_wall_ms"] = t.decode_wall_ms;
  s["prefill_wall_ms"] = t.prefill_wall_ms;
  s["coverage"] = t.coverage;
  s["tokens"] = r.decode_tokens;
  s["prompt_tokens"] = r.prompt_tokens;
  return s;
}

}  // namespace

ExperimentOutcome run_experiment(const ExperimentRequest& r, const ExperimentProgress& progress) {
  const bool timeline = r.measurement == Measurement::Timeline;
  ExperimentOutcome out;
  step(progress.setup, 0.0, "opening the model");
  out.model = model_for(r.model_path, r.model, r.config.backend, r.tokenizer_path, progress.convert);
  const bool sweep = !r.depths.empty();
  if (sweep && timeline) throw Error("timeline: a depth sweep is a decode-proxy measurement");
  if (sweep) check_depth_sweep(r.depths, r.decode_tokens, *out.model, r.model_path);
  std::unique_ptr<Store> store = open_store(r.store_path);
  step(progress.setup, 0.5, "loading the backend");
  const int context = sweep ? *std::max_element(r.depths.begin(), r.depths.end()) : std::max(0, r.prompt_tokens);
  // Wide enough for any int pair; past what a KV cache can index, run_decode_proxy refuses it.
  const uint32_t positions = static_cast<uint32_t>(std::min<uint64_t>(
      static_cast<uint64_t>(context) + static_cast<uint64_t>(std::max(0, r.decode_tokens)), UINT32_MAX - 1));
  LoadedBackend lb = load_backend(r.config, out.model, timeline ? positions + 1 : positions);
  if (store) store->sync_switches(lb.name, lb.backend->switches());
  out.backend = lb.name;
  out.passport = lb.passport;
  out.load_ms = lb.load_ms;

  RunBundle b;
  if (timeline) {
    TimelineParams p;
    p.decode_tokens = r.decode_tokens;
    p.prompt_tokens = r.prompt_tokens;
    out.timeline = run_timeline(*lb.backend, *out.model, p, progress.measure);
    if (out.timeline.spans.empty())
      throw Error("timeline: backend '" + lb.name + "' reported no spans (it does not implement set_timeline)");
    out.summary = timeline_summary(out.timeline, r);
    if (!store) return out;
    b = begin_run_bundle(store.get(), RunKind::Timeline, *out.model, r.model_path, lb, r.config);
    b.ops = out.timeline.spans;
    SampleRecord s;
    s.prompt_tokens = r.prompt_tokens;
    s.decode_tokens = r.decode_tokens;
    // With timing on; the decode-proxy figure (timing off) is the one to quote.
    s.decode_tok_s = out.timeline.decode_wall_ms > 0 ? r.decode_tokens / (out.timeline.decode_wall_ms / 1e3) : 0;
    s.peak_device_bytes = lb.backend->device_memory_peak();
    b.samples.push_back(s);
  } else if (sweep) {
    const GpuSource gpu = gpu_source_for(lb.passport.device);  // one NVML session for every depth
    const CpuEnergySource cpu_energy = cpu_energy_source_for(lb.passport.device);
    // Each depth is stored as soon as it is measured: a sweep cancelled at its deepest depth
    // keeps the shallower ones. Its runs share the sweep's start time, which tells one sweep's
    // runs from another's with the same list.
    const std::string sweep_started_at = utc_now_iso();
    for (size_t k = 0; k < r.depths.size(); ++k) {
      DepthPoint point;
      point.depth = r.depths[k];
      point.decode_proxy = run_decode_proxy(*lb.backend, *out.model, lb.passport, proxy_params(r, point.depth, gpu, cpu_energy),
                                            depth_progress(progress.measure, k, r.depths.size(), point.depth));
      point.summary = point.decode_proxy;
      if (store) {
        RunBundle depth_run = begin_run_bundle(store.get(), RunKind::DecodeProxy, *out.model, r.model_path, lb, r.config);
        depth_run.samples = point.decode_proxy.samples;
        nlohmann::json params = run_params(r);
        params["prompt_tokens"] = point.depth;
        params["depth"] = point.depth;
        params["depth_sweep"] = r.depths;
        params["sweep_started_at"] = sweep_started_at;
        point.run_id = store_run(*store, std::move(depth_run), r, params, point.summary);
      }
      out.depth_sweep.push_back(std::move(point));
    }
    if (store) out.store_path = store->path();
    return out;
  } else {
    out.decode_proxy = run_decode_proxy(*lb.backend, *out.model, lb.passport,
                                        proxy_params(r, r.prompt_tokens, gpu_source_for(lb.passport.device),
                                                     cpu_energy_source_for(lb.passport.device)),
                                        progress.measure);
    out.summary = out.decode_proxy;
    if (!store) return out;
    b = begin_run_bundle(store.get(), RunKind::DecodeProxy, *out.model, r.model_path, lb, r.config);
    b.samples = out.decode_proxy.samples;
  }
  out.run_id = store_run(*store, std::move(b), r, run_params(r), out.summary);
  out.store_path = store->path();
  return out;
}

AbExperimentOutcome run_ab_experiment(const AbExperimentRequest& r, const ExperimentProgress& progress) {
  AbExperimentOutcome out;
  step(progress.setup, 0.0, "opening the model");
  // One model may serve both sides: converted for their backend when they share one.
  const std::string both = resolve_backend_name(r.a.backend) == resolve_backend_name(r.b.backend) ? r.a.backend : "";
  out.model_a = model_for(r.model_path, r.model, both, r.tokenizer_path, progress.convert);
  const bool two_models = !r.model_path_b.empty() && r.model_path_b != r.model_path;
  const std::string path_b = two_models ? r.model_path_b : r.model_path;
  out.model_b = two_models ? open_lab_model(path_b, both, r.tokenizer_path, progress.convert) : out.model_a;
  std::unique_ptr<Store> store = open_store(r.store_path);
  out.result = run_ab(r.a, out.model_a, r.b, out.model_b, r.params, r.switch_name, progress.measure);
  if (!store) {
    out.stored.outcome = judge_ab(out.result, std::nullopt);
    return out;
  }
  for (const AbSide* s : {&out.result.a, &out.result.b}) store->sync_switches(s->backend, backend_switch_table(s->backend));
  {
    sql::Transaction tx(store->handle());
    out.stored = judge_and_store_ab(*store, out.result, *out.model_a, r.model_path, out.model_b.get(), path_b);
    if (r.also_store) r.also_store(*store, out.stored);
    tx.commit();
  }
  out.store_path = store->path();
  out.comparison = store->comparison_for_run(out.stored.run_id);
  if (!out.result.switch_name.empty()) {
    for (const auto& o : store->find_optimisations(out.result.switch_name))
      if (o.backend == out.result.b.backend) out.optimisation = o;
    if (out.optimisation) out.history = store->optimisation_history(out.optimisation->id);
  }
  return out;
}

}  // namespace p64
