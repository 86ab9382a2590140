#include "ui/app/ab_session.h"

#include "engine/common/error.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/model/model.h"
#include "engine/runtime/backend_registry.h"
#include "ui/app/lab_sessions.h"

namespace p64::ui {

std::string compose_config(const std::string& backend, const std::string& options) {
  std::string opts = options;
  while (!opts.empty() && (opts.front() == ',' || opts.front() == ' ')) opts.erase(opts.begin());
  while (!opts.empty() && (opts.back() == ',' || opts.back() == ' ')) opts.pop_back();
  return "backend=" + (backend.empty() ? std::string("auto") : backend) + (opts.empty() ? "" : "," + opts);
}

AbOutcome run_ab_session(const AbRequest& req, const ProgressFn& progress) {
  // Parse first: a typo in either side is reported before minutes of measuring.
  const LabConfig a = LabConfig::parse(req.config_a), b = LabConfig::parse(req.config_b);
  if (progress && !progress(0.0, "opening the model")) throw Cancelled();
  // One model may serve both sides: converted for their backend when they share one.
  const std::string both = resolve_backend_name(a.backend) == resolve_backend_name(b.backend) ? a.backend : "";
  std::shared_ptr<const Model> model = req.model;
  if (!model || model->source() != req.model_path) {
    if (req.model_path.empty()) throw Error("no model: open a .p64 in the Models panel first");
    model = open_lab_model(req.model_path, both);
  }
  const bool two_models = !req.model_path_b.empty() && req.model_path_b != req.model_path;
  const std::string path_b = two_models ? req.model_path_b : req.model_path;
  std::shared_ptr<const Model> model_b = two_models ? open_lab_model(path_b, both) : model;
  AbOutcome out;
  // With the split, the A/B is the first 80% of the bar and each side's timeline 10%.
  auto part = [&progress](double from, double width) -> ProgressFn {
    if (!progress) return {};
    return [progress, from, width](double f, std::string_view what) { return progress(from + width * f, what); };
  };
  out.result = run_ab(a, model, b, model_b, req.params, {}, req.op_split ? part(0, 0.8) : progress);
  if (req.op_split) {
    LabRequest side{req.model_path, model, req.config_a, "", ""};
    out.split_a = run_timeline_session(side, req.split_params, part(0.8, 0.1)).result.spans;
    side = LabRequest{path_b, model_b, req.config_b, "", ""};
    out.split_b = run_timeline_session(side, req.split_params, part(0.9, 0.1)).result.spans;
  }
  if (req.store_path.empty()) {
    out.stored.outcome = judge_ab(out.result, std::nullopt);
    return out;
  }
  auto store = Store::open(req.store_path);
  for (const AbSide* s : {&out.result.a, &out.result.b})
    store->sync_switches(s->backend, create_backend(s->backend)->switches());
  out.stored = judge_and_store_ab(*store, out.result, *model, req.model_path, model_b.get(), path_b);
  out.comparison = store->comparison_for_run(out.stored.run_id);
  if (!out.result.switch_name.empty()) {
    for (const auto& o : store->find_optimisations(out.result.switch_name))
      if (o.backend == out.result.b.backend) out.optimisation = o;
    if (out.optimisation) out.history = store->optimisation_history(out.optimisation->id);
  }
  return out;
}

}  // namespace p64::ui
