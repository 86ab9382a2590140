#include "ui/core/ab_session.h"

#include "engine/common/error.h"
#include "engine/lab/experiment.h"
#include "ui/core/lab_sessions.h"

namespace p64::ui {

std::string compose_config(const std::string& backend, const std::string& options) {
  std::string opts = options;
  while (!opts.empty() && (opts.front() == ',' || opts.front() == ' ')) opts.erase(opts.begin());
  while (!opts.empty() && (opts.back() == ',' || opts.back() == ' ')) opts.pop_back();
  return "backend=" + (backend.empty() ? std::string("auto") : backend) + (opts.empty() ? "" : "," + opts);
}

AbOutcome run_ab_session(const AbRequest& req, const ProgressFn& progress) {
  // Parse first: a typo in either side is reported before minutes of measuring.
  AbExperimentRequest e;
  e.a = LabConfig::parse(req.config_a);
  e.b = LabConfig::parse(req.config_b);
  if (req.model_path.empty()) throw Error("no model: open a .p64 in the Models panel first");
  e.model_path = req.model_path;
  e.model = req.model;
  e.model_path_b = req.model_path_b;
  e.params = req.params;
  e.store_path = req.store_path;
  // With the split, the A/B is the first 80% of the bar and each side's timeline 10%.
  auto part = [&progress](double from, double width) -> ProgressFn {
    if (!progress) return {};
    return [progress, from, width](double f, std::string_view what) { return progress(from + width * f, what); };
  };
  ExperimentProgress steps;
  steps.setup = part(0, 0);
  steps.measure = req.op_split ? part(0, 0.8) : progress;
  AbExperimentOutcome o = run_ab_experiment(e, steps);
  AbOutcome out;
  out.result = std::move(o.result);
  out.stored = std::move(o.stored);
  out.comparison = std::move(o.comparison);
  out.optimisation = std::move(o.optimisation);
  out.history = std::move(o.history);
  if (req.op_split) {
    const std::string path_b = o.model_b == o.model_a ? req.model_path : req.model_path_b;
    LabRequest side{req.model_path, o.model_a, req.config_a, "", ""};
    out.split_a = run_timeline_session(side, req.split_params, part(0.8, 0.1)).result.spans;
    side = LabRequest{path_b, o.model_b, req.config_b, "", ""};
    out.split_b = run_timeline_session(side, req.split_params, part(0.9, 0.1)).result.spans;
  }
  return out;
}

}  // namespace p64::ui
