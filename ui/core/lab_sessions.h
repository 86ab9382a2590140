#pragma once
// Lab sessions the workbench starts (decode-proxy, timeline), run on a worker thread through the
// engine call `p64 decode-proxy` / `p64 timeline` make (run_experiment, engine/lab/experiment.h),
// so a run started here and one started from the CLI are the same record.
#include <memory>
#include <string>

#include "engine/common/progress.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/experiment.h"
#include "engine/lab/timeline_run.h"

namespace p64 {
class Model;
}

namespace p64::ui {

struct LabRequest {
  std::string model_path;
  std::shared_ptr<const Model> model;  // the open model when it is that file; else opened here
  std::string config = "backend=auto";  // LabConfig text: "backend=cpu,opt.NAME=V,threads=2"
  std::string store_path;               // empty = do not store
  std::string label;                    // free text kept with the run
};

struct DecodeProxyOutcome {
  int64_t run_id = 0;
  DecodeProxyResult result;
  std::string backend, device;
  double load_ms = 0;
};

// A depth sweep: one decode-proxy per depth on one backend load, one stored run each.
struct DepthSweepOutcome {
  std::vector<DepthPoint> points;  // in the order the depths were given
  std::string backend, device;
  double load_ms = 0;
};

struct TimelineOutcome {
  int64_t run_id = 0;
  TimelineResult result;
  std::string backend, device;
};

DecodeProxyOutcome run_decode_proxy_session(const LabRequest& request, const DecodeProxyParams& params,
                                            const ProgressFn& progress);
// `params.prompt_tokens` is unused: each depth is its own prompt length.
DepthSweepOutcome run_depth_sweep_session(const LabRequest& request, const DecodeProxyParams& params,
                                          const std::vector<int>& depths, const ProgressFn& progress);
TimelineOutcome run_timeline_session(const LabRequest& request, const TimelineParams& params,
                                     const ProgressFn& progress);

}  // namespace p64::ui
