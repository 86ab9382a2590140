#include "ui/shell/first_start_work.h"

#include <QString>

#include "engine/common/error.h"
#include "engine/format/convert.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "ui/core/ab_session.h"
#include "ui/core/lab_sessions.h"
#include "ui/core/model_io.h"

namespace p64::ui {

namespace {
// Progress of one step as its share [from, from + width) of the whole bar.
ProgressFn step(const ProgressFn& progress, double from, double width) {
  return [progress, from, width](double f, std::string_view what) {
    return progress ? progress(from + width * f, what) : true;
  };
}

constexpr const char* kLabel = "first start";
}  // namespace

bool store_has_own_runs(const Store& store) {
  RunFilter f;
  f.include_imported = false;
  f.limit = 1;
  return !store.runs(f).empty();
}

FirstStartOutcome run_first_start(const FirstStartPlan& plan, const ProgressFn& progress) {
  if (plan.gguf_path.empty() || plan.store_path.empty()) throw Error("first start: no model path or store given");
  FirstStartOutcome out;
  out.p64_path = default_p64_path(QString::fromStdString(plan.gguf_path)).toStdString();
  write_synthetic_gguf(plan.preset, plan.quant, 1, plan.gguf_path, step(progress, 0.0, 0.15));
  convert_to_p64(plan.gguf_path, out.p64_path, {}, step(progress, 0.15, 0.15));
  auto model = open_lab_model(out.p64_path, "cpu");

  LabRequest req{out.p64_path, model, "backend=cpu", plan.store_path, kLabel};
  DecodeProxyParams proxy;
  proxy.decode_tokens = 32;
  proxy.prompt_tokens = 16;
  proxy.runs = 3;
  out.decode_proxy_run = run_decode_proxy_session(req, proxy, step(progress, 0.3, 0.3)).run_id;

  TimelineParams timeline;
  timeline.decode_tokens = 8;
  timeline.prompt_tokens = 8;
  out.timeline_run = run_timeline_session(req, timeline, step(progress, 0.6, 0.1)).run_id;

  AbRequest ab;
  ab.model_path = out.p64_path;
  ab.model = model;
  ab.config_a = "backend=cpu,threads=1";
  ab.config_b = "backend=cpu,threads=2";
  ab.store_path = plan.store_path;
  ab.params.runs = 2;
  ab.params.warmup = 0;
  ab.params.decode_tokens = 16;
  ab.params.prompt_tokens = 8;
  ab.params.quality_tokens = 16;
  out.ab_run = run_ab_session(ab, step(progress, 0.7, 0.3)).stored.run_id;
  if (progress) progress(1.0, "first measurements stored");
  return out;
}

}  // namespace p64::ui
