#include "engine/lab/ab.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"
#include "engine/model/model.h"

namespace p64 {
namespace {

nlohmann::json quality_json(const QualityReport& q) {
  return {{"positions", q.positions},        {"compared_positions", q.compared_positions},
          {"top1_agreement", q.top1_agreement}, {"rms_rel_error", q.rms_rel_error},
          {"max_rel_error", q.max_rel_error}, {"mean_kl", q.mean_kl},
          {"max_kl", q.max_kl},               {"pass", q.pass},
          {"failure", q.failure},             {"summary", q.summary()}};
}

std::string file_name(const std::string& path) {
  const auto slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// By typed value: "opt.int8_activations=0,opt.kv_f16=0" is the reference although it names a
// default the reference leaves unsaid.
bool is_reference(const LabConfig& c, const std::string& resolved, const LabConfig& reference) {
  LabConfig as_run = c;
  as_run.backend = resolved;
  return same_switches(as_run, reference);
}

// A Bool switch's two values (SwitchInfo::choices).
bool is_on(const std::string& v) { return v == "1"; }
bool is_off(const std::string& v) { return v == "0"; }

}  // namespace

std::string AbResult::quality_failure() const {
  if (b_is_reference) return {};
  if (b_vs_reference) {
    if (b_vs_reference->pass) return {};
    // Not B's doing alone when A, the baseline, fails the gate as well: say so.
    const std::string a_too =
        a_vs_reference && !a_vs_reference->pass ? " (A fails it too: " + a_vs_reference->failure + ")" : "";
    return "B vs reference: " + b_vs_reference->failure + a_too;
  }
  return b_vs_a.pass ? std::string() : "B vs A: " + b_vs_a.failure;
}

bool AbResult::b_turns_switch_off() const {
  return !switch_name.empty() && is_on(switch_a_value) && is_off(switch_b_value);
}

namespace {
// Two model files make the A/B about the model: the vocabularies must match for the quality gate,
// and nothing else may change at the same time.
void check_two_models(const LabConfig& ca, const Model& ma, const LabConfig& cb, const Model& mb,
                      const std::string& switch_name) {
  const uint32_t va = ma.hparams().n_vocab, vb = mb.hparams().n_vocab;
  if (va != vb)
    throw Error("A/B: model A (" + ma.source() + ") has " + std::to_string(va) + " tokens and model B (" +
                mb.source() + ") " + std::to_string(vb) +
                ": the quality gate compares logits token by token, so A and B need one vocabulary");
  if (!switch_name.empty())
    throw Error("A/B: switch '" + switch_name + "' was named, but A and B run different models: the verdict "
                "would be about the model, not the switch");
  if (!differing_switches(ca, cb).empty())
    throw Error("A/B: A and B differ in their model and in their switches: one change at a time (the same "
                "switches on both models, or the switches on one model)");
}
}  // namespace

AbResult run_ab(const LabConfig& ca, const LabConfig& cb, std::shared_ptr<const Model> model, const AbParams& p,
                std::string switch_name, const ProgressFn& progress) {
  return run_ab(ca, model, cb, model, p, std::move(switch_name), progress);
}

AbResult run_ab(const LabConfig& ca, std::shared_ptr<const Model> model_a, const LabConfig& cb,
                std::shared_ptr<const Model> model_b, const AbParams& p, std::string switch_name,
                const ProgressFn& progress) {
  if (p.runs < 2) throw Error("A/B: --runs must be at least 2 (the plan's rule)");
  if (!model_a || !model_b) throw Error("A/B: a side has no model");
  const bool same_model = model_a == model_b;
  if (!same_model) check_two_models(ca, *model_a, cb, *model_b, switch_name);
  const uint32_t ctx = static_cast<uint32_t>(std::max(p.prompt_tokens + p.decode_tokens, p.quality_tokens) + 1);
  AbResult r;
  r.params = p;
  r.two_models = !same_model;
  if (same_model) r.switch_name = judged_switch(ca, cb, switch_name);  // before minutes of measuring
  if (!r.switch_name.empty()) {
    r.switch_a_value = switch_value(ca, r.switch_name);
    r.switch_b_value = switch_value(cb, r.switch_name);
  }
  LoadedBackend la = load_backend(ca, model_a, ctx);
  LoadedBackend lb = load_backend(cb, model_b, ctx);
  auto fill = [](AbSide& side, const LabConfig& c, const LoadedBackend& l, const Model& m) {
    side.config = c;
    side.config.backend = l.name;
    side.backend = l.name;
    side.model = m.source();
    side.passport = l.passport;
    side.load_ms = l.load_ms;
  };
  fill(r.a, ca, la, *model_a);
  fill(r.b, cb, lb, *model_b);
  // A CUDA side's GPU; both sides on one GPU share its NVML session.
  const DeviceFacts &dev_a = la.passport.device, &dev_b = lb.passport.device;
  const GpuSource gpu_a = gpu_source_for(dev_a);
  const bool same_gpu = dev_a.backend == "cuda" && dev_b.backend == "cuda" && dev_a.pci_bus_id == dev_b.pci_bus_id;
  const GpuSource gpu_b = same_gpu ? gpu_a : gpu_source_for(dev_b);
  const GpuSource& watched = gpu_b.wanted() ? gpu_b : gpu_a;  // B's GPU (the side judged), else A's
  // CPU sides read the packages' energy; both share one counter (they run one after the other).
  const CpuEnergySource cpu_energy = cpu_energy_source_for(dev_a.backend == "cpu" ? dev_a : dev_b);

  DecodeProxyParams one;
  one.decode_tokens = p.decode_tokens;
  one.prompt_tokens = p.prompt_tokens;
  one.runs = 1;
  one.warmup = 0;
  one.machine_probe = {};  // one watch over all the measured runs below
  const int steps = 2 * (p.warmup + p.runs);
  std::vector<int32_t> a_generated;
  std::optional<MachineWatch> watch;
  std::optional<GpuWatch> gpu_watch;
  std::vector<double> decode_j[2];
  std::string energy_source[2];
  for (int i = 0; i < p.warmup + p.runs; ++i) {
    if (i == p.warmup && p.machine_probe) {
      watch.emplace(p.machine_probe);
      if (watched.monitor) gpu_watch.emplace(watched.monitor);
    }
    for (int side = 0; side < 2; ++side) {
      LoadedBackend& l = side == 0 ? la : lb;
      AbSide& s = side == 0 ? r.a : r.b;
      one.gpu = side == 0 ? gpu_a : gpu_b;
      one.cpu_energy = (side == 0 ? dev_a : dev_b).backend == "cpu" ? cpu_energy : CpuEnergySource{};
      DecodeProxyResult d = run_decode_proxy(*l.backend, side == 0 ? *model_a : *model_b, l.passport, one);
      if (side == 0) a_generated = d.generated;
      s.energy_unavailable = d.energy_unavailable;
      if (i >= p.warmup) {
        SampleRecord rec = d.samples.at(0);
        rec.rep = i - p.warmup;
        rec.side = side == 0 ? "a" : "b";
        s.samples.push_back(rec);
        if (d.energy) {
          energy_source[side] = d.energy->source;
          decode_j[side].push_back(d.energy->joules.at(0));
        }
      }
      if (progress) {
        char what[128];
        std::snprintf(what, sizeof what, "%s %s %d: %.2f tok/s", i < p.warmup ? "warm-up" : "run", side ? "B" : "A",
                      i < p.warmup ? i + 1 : i + 1 - p.warmup, d.samples.at(0).decode_tok_s);
        if (!progress(static_cast<double>(2 * i + side + 1) / (steps + 1), what)) throw Cancelled();
      }
    }
  }
  auto tok_s = [](const AbSide& s) {
    std::vector<double> v;
    for (const auto& x : s.samples) v.push_back(x.decode_tok_s);
    return v;
  };
  if (watch) {
    r.machine = watch->stop();
    if (gpu_watch) r.machine.gpu = gpu_watch->stop();
    else if (watched.wanted()) r.machine.gpu = unavailable_gpu(watched.unavailable);
  }
  r.a.decode_tok_s = min_median_max(tok_s(r.a));
  r.b.decode_tok_s = min_median_max(tok_s(r.b));
  // The watched GPU judges only the side(s) that ran on it.
  auto machine_of = [&](bool ran_on_watched) {
    MachineLoad m = r.machine;
    if (!ran_on_watched) m.gpu.reset();
    return m;
  };
  r.a.busy = busy_flag(r.a.decode_tok_s, machine_of(gpu_a.wanted() && (same_gpu || !gpu_b.wanted())));
  r.b.busy = busy_flag(r.b.decode_tok_s, machine_of(gpu_b.wanted()));
  for (int side = 0; side < 2; ++side)
    if (!energy_source[side].empty())
      (side == 0 ? r.a : r.b).energy =
          summarise_decode_energy(energy_source[side], std::move(decode_j[side]), p.decode_tokens);

  // Quality on realistic tokens: the prompt, then A's own greedy continuation.
  std::vector<int32_t> tokens = proxy_prompt(*model_a, p.prompt_tokens).ids;
  tokens.insert(tokens.end(), a_generated.begin(), a_generated.end());
  tokens.resize(std::min<size_t>(tokens.size(), static_cast<size_t>(p.quality_tokens)));
  r.b_vs_a = teacher_forced_compare(*la.backend, *lb.backend, tokens, p.thresholds);
  const LabConfig& ref = p.reference;
  const bool a_is_reference = is_reference(ca, la.name, ref);
  r.b_is_reference = is_reference(cb, lb.name, ref);
  r.reference = a_is_reference ? "A (" + ref.to_string() + ")"
                : r.b_is_reference ? "B (" + ref.to_string() + ")"
                : same_model ? ref.to_string() : ref.to_string() + " on each side's model";
  if (same_model && a_is_reference) {
    r.b_vs_reference = r.b_vs_a;
  } else if (same_model && r.b_is_reference) {
    r.a_vs_reference = teacher_forced_compare(*lb.backend, *la.backend, tokens, p.thresholds);
  } else if (p.compare_reference) {
    // The reference on each side's own model (one load when they share it).
    std::optional<LoadedBackend> ref_a, ref_b;
    if (!a_is_reference) {
      ref_a = load_backend(ref, model_a, ctx, /*with_passport=*/false);
      r.a_vs_reference = teacher_forced_compare(*ref_a->backend, *la.backend, tokens, p.thresholds);
    }
    if (!r.b_is_reference) {
      if (!same_model || !ref_a) ref_b = load_backend(ref, model_b, ctx, /*with_passport=*/false);
      Backend& reference_b = ref_b ? *ref_b->backend : *ref_a->backend;
      r.b_vs_reference = teacher_forced_compare(reference_b, *lb.backend, tokens, p.thresholds);
    }
  }
  if (progress) progress(1.0, "quality gate: " + (r.b_vs_reference ? *r.b_vs_reference : r.b_vs_a).summary());
  return r;
}

VerdictOutcome judge_ab(const AbResult& r, std::optional<Verdict> previous) {
  std::vector<double> a, b;
  for (const auto& s : r.a.samples) a.push_back(s.decode_tok_s);
  for (const auto& s : r.b.samples) b.push_back(s.decode_tok_s);
  VerdictInput in;
  in.a_tok_s = a;
  in.b_tok_s = b;
  in.quality_pass = r.quality_pass();
  in.quality_failure = r.quality_failure();
  // Turning a switch off is no step towards promoting anything: no streak of wins.
  in.previous = r.b_turns_switch_off() ? std::nullopt : previous;
  VerdictOutcome o = decide_verdict(in);
  if (r.b_turns_switch_off()) {
    const std::string b = "B (" + r.switch_name + "=" + r.switch_b_value + ")";
    if (o.verdict == Verdict::Win)
      o.reason = b + " is faster: " + r.switch_name + " keeps its status; an A/B with " + r.switch_name + "=" +
                 r.switch_a_value + " as B can lower it (" + o.reason + ")";
    else if (!in.quality_pass)
      o.reason = b + " fails the quality gate: " + r.switch_name + " stays on (" + o.reason + ")";
    else
      o.reason = b + " is not faster: " + r.switch_name + " stays on (" + o.reason + ")";
  }
  return o;
}

nlohmann::json ab_to_json(const AbResult& r, const VerdictOutcome& o) {
  nlohmann::json j = {
      {"switch", r.switch_name},
      {"a", {{"config", r.a.config.to_string()}, {"backend", r.a.backend}, {"model", r.a.model},
             {"decode_tok_s", r.a.decode_tok_s}, {"busy", r.a.busy}}},
      {"b", {{"config", r.b.config.to_string()}, {"backend", r.b.backend}, {"model", r.b.model},
             {"decode_tok_s", r.b.decode_tok_s}, {"busy", r.b.busy}}},
      {"machine", r.machine},
      {"busy", r.a.busy.busy || r.b.busy.busy},
      {"same_model", r.same_model()},
      {"ratio", {{"median", o.ratio_median}, {"min", o.ratio_min}, {"max", o.ratio_max}}},
      {"test", {{"name", "Mann-Whitney U"}, {"u", o.u}, {"p_value", o.p_value}, {"exact", o.exact},
                {"ratio_interval", o.ci_bounded ? nlohmann::json::array({o.ci_low, o.ci_high}) : nlohmann::json()},
                {"pooled_cv", o.pooled_cv}, {"runs_needed", o.runs_needed}, {"summary", describe_test(o)}}},
      {"quality", {{"b_vs_a", quality_json(r.b_vs_a)}, {"reference", r.reference}, {"pass", r.quality_pass()}}},
      {"b_turns_switch_off", r.b_turns_switch_off()},
      {"verdict", std::string(to_string(o.verdict))},
      {"reason", o.reason},
      {"params", {{"runs", r.params.runs}, {"warmup", r.params.warmup}, {"tokens", r.params.decode_tokens},
                  {"prompt_tokens", r.params.prompt_tokens}, {"quality_tokens", r.params.quality_tokens}}}};
  if (r.a_vs_reference) j["quality"]["a_vs_reference"] = quality_json(*r.a_vs_reference);
  if (r.b_vs_reference) j["quality"]["b_vs_reference"] = quality_json(*r.b_vs_reference);
  for (const AbSide* s : {&r.a, &r.b}) {
    auto& arr = j[s == &r.a ? "a" : "b"]["samples"] = nlohmann::json::array();
    for (const auto& x : s->samples) arr.push_back(x.decode_tok_s);
    if (s->energy) j[s == &r.a ? "a" : "b"]["energy"] = *s->energy;
    if (!s->energy_unavailable.empty()) j[s == &r.a ? "a" : "b"]["energy_unavailable"] = s->energy_unavailable;
  }
  return j;
}

StoredAb judge_and_store_ab(Store& store, const AbResult& r, const Model& model, const std::string& model_path,
                            const Model* model_b, const std::string& model_b_path) {
  StoredAb out;
  const ModelRecord m = store.describe_model(model, model_path);  // may hash the file: outside the lock
  std::optional<ModelRecord> mb;
  if (model_b && model_b_path != model_path) mb = store.describe_model(*model_b, model_b_path);
  sql::Transaction tx(store.handle());  // previous verdict, this verdict and the history move together
  const int64_t model_id = store.upsert_model(m);
  if (mb) store.upsert_model(*mb);
  const std::string device = r.b.passport.device.name;
  if (!r.switch_name.empty()) {
    if (auto prev = store.previous_comparison(r.switch_name, model_id, device)) out.previous = prev->verdict;
  }
  out.outcome = judge_ab(r, out.previous);

  RunBundle b;
  b.run.kind = RunKind::Ab;
  b.run.status = RunStatus::Ok;
  b.run.model_id = model_id;
  b.run.backend = r.b.backend;
  b.run.device = device;
  b.run.config = "A: " + r.a.config.to_string() + " | B: " + r.b.config.to_string();
  if (mb) b.run.config += " (A on " + file_name(model_path) + ", B on " + file_name(model_b_path) + ")";
  b.run.options_json = json_text(nlohmann::json{{"a", r.a.config.switches}, {"b", r.b.config.switches}});
  b.run.params_json = json_text(ab_to_json(r, out.outcome)["params"]);
  b.run.summary_json = json_text(ab_to_json(r, out.outcome));
  b.run.git_revision = r.b.passport.build.git_revision;
  b.run.label = r.switch_name;
  b.passport = r.b.passport;
  b.samples = r.a.samples;
  b.samples.insert(b.samples.end(), r.b.samples.begin(), r.b.samples.end());
  ComparisonRecord c;
  c.switch_name = r.switch_name;
  c.backend = r.b.backend;
  c.model_id = model_id;
  c.device = device;
  c.config_a = r.a.config.to_string();
  c.config_b = r.b.config.to_string();
  c.a_median = out.outcome.a_median;
  c.b_median = out.outcome.b_median;
  c.ratio_median = out.outcome.ratio_median;
  c.ratio_min = out.outcome.ratio_min;
  c.ratio_max = out.outcome.ratio_max;
  c.quality_pass = r.quality_pass();
  c.quality_json = json_text(ab_to_json(r, out.outcome)["quality"]);
  c.verdict = out.outcome.verdict;
  c.reason = out.outcome.reason;
  b.comparison = c;
  out.run_id = store.write_run(std::move(b));

  if (!r.switch_name.empty()) {
    OptimisationRecord o;
    o.name = r.switch_name;
    o.backend = r.b.backend;
    o.status = OptStatus::Candidate;
    o.description = "(registered by an A/B run)";
    int64_t opt_id = 0;
    for (const auto& known : store.find_optimisations(r.switch_name))
      if (known.backend == r.b.backend) opt_id = known.id;
    if (!opt_id) opt_id = store.upsert_optimisation(o);
    const OptStatus current = [&] {
      for (const auto& known : store.find_optimisations(r.switch_name))
        if (known.id == opt_id) return known.status;
      return OptStatus::Candidate;
    }();
    char evidence[240];
    std::snprintf(evidence, sizeof evidence,
                  "A/B run %lld: B/A %.3f [%.3f-%.3f], A %.2f B %.2f tok/s, p %.3g, quality %s%s",
                  static_cast<long long>(out.run_id), out.outcome.ratio_median, out.outcome.ratio_min,
                  out.outcome.ratio_max, out.outcome.a_median, out.outcome.b_median, out.outcome.p_value,
                  r.quality_pass() ? "pass" : "FAIL", r.a.busy.busy || r.b.busy.busy ? ", machine busy" : "");
    // A B that turns the switch off judges keeping it, and a win confirms a default: neither
    // lowers the switch's status.
    std::optional<OptStatus> next = r.b_turns_switch_off() ? std::nullopt : status_after(out.outcome.verdict);
    if (current == OptStatus::Default && next == OptStatus::Candidate) next = std::nullopt;
    store.record_status(opt_id, next.value_or(current),
                        std::string(to_string(out.outcome.verdict)) + ": " + out.outcome.reason, out.run_id, evidence);
  }
  tx.commit();
  return out;
}

}  // namespace p64
