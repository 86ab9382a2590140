#include "ui/core/lab_sessions.h"

#include "engine/common/error.h"
#include "engine/lab/experiment.h"

namespace p64::ui {

namespace {

// The engine's request for a session; the model must have been opened in the Models panel.
ExperimentRequest request_for(const LabRequest& r, Measurement measurement) {
  if (r.model_path.empty()) throw Error("no model: open a .p64 in the Models panel first");
  ExperimentRequest e;
  e.measurement = measurement;
  e.model_path = r.model_path;
  e.model = r.model;
  e.config = LabConfig::parse(r.config);
  e.store_path = r.store_path;
  e.label = r.label;
  e.origin = "p64lab";
  return e;
}

// One bar for the session: opening the model and loading the backend are its first 10%.
ExperimentProgress one_bar(const ProgressFn& progress) {
  if (!progress) return {};
  ExperimentProgress p;
  p.setup = [progress](double f, std::string_view what) { return progress(0.1 * f, what); };
  p.measure = [progress](double f, std::string_view what) { return progress(0.1 + 0.9 * f, what); };
  return p;
}

ExperimentRequest decode_proxy_request(const LabRequest& request, const DecodeProxyParams& params) {
  ExperimentRequest e = request_for(request, Measurement::DecodeProxy);
  e.decode_tokens = params.decode_tokens;
  e.prompt_tokens = params.prompt_tokens;
  e.runs = params.runs;
  e.warmup = params.warmup;
  e.warm_repeats = params.warm_repeats;
  e.machine_probe = params.machine_probe;
  return e;
}

}  // namespace

DecodeProxyOutcome run_decode_proxy_session(const LabRequest& request, const DecodeProxyParams& params,
                                            const ProgressFn& progress) {
  ExperimentOutcome o = run_experiment(decode_proxy_request(request, params), one_bar(progress));
  return {o.run_id, std::move(o.decode_proxy), o.backend, o.passport.device.name, o.load_ms};
}

DepthSweepOutcome run_depth_sweep_session(const LabRequest& request, const DecodeProxyParams& params,
                                          const std::vector<int>& depths, const ProgressFn& progress) {
  ExperimentRequest e = decode_proxy_request(request, params);
  e.depths = depths;
  ExperimentOutcome o = run_experiment(e, one_bar(progress));
  return {std::move(o.depth_sweep), o.backend, o.passport.device.name, o.load_ms};
}

TimelineOutcome run_timeline_session(const LabRequest& request, const TimelineParams& params,
                                     const ProgressFn& progress) {
  ExperimentRequest e = request_for(request, Measurement::Timeline);
  e.decode_tokens = params.decode_tokens;
  e.prompt_tokens = params.prompt_tokens;
  ExperimentOutcome o = run_experiment(e, one_bar(progress));
  return {o.run_id, std::move(o.timeline), o.backend, o.passport.device.name};
}

}  // namespace p64::ui
