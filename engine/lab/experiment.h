#pragma once
// An experiment as one engine call. A request names the model file(s), the backend and its
// switches, and the measurement (tokens, prompt, runs, warm-up); the call opens the model (any
// format decode reads), loads the backend, measures, stores the run and returns a typed outcome.
// The CLI and the GUI only build requests and render outcomes, so a run started from either is
// the same record.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/progress.h"
#include "engine/lab/ab.h"
#include "engine/lab/decode_proxy.h"
#include "engine/lab/lab_config.h"
#include "engine/lab/store_types.h"
#include "engine/lab/timeline_run.h"

namespace p64 {

enum class Measurement { DecodeProxy, Timeline };

struct ExperimentRequest {
  Measurement measurement = Measurement::DecodeProxy;
  std::string model_path;              // the user's file: stored with the run, named in errors
  std::string tokenizer_path;          // llama2.c checkpoints only
  std::shared_ptr<const Model> model;  // already open for model_path (the GUI's); else opened here
  LabConfig config;
  int decode_tokens = 32;
  int prompt_tokens = 32;
  int runs = 2;          // decode-proxy: measured runs
  int warmup = 1;        // decode-proxy: untimed runs first
  int warm_repeats = 0;  // decode-proxy: the plan's R6 repeats on the kept-loaded engine
  // decode-proxy: a depth sweep (engine/lab/depth_sweep.h), one backend load and one stored run
  // per depth, each depth the prompt length in place of prompt_tokens; empty: one run.
  std::vector<int> depths;
  MachineProbe machine_probe = read_machine_sample;
  // A path rather than an open Store: the request stays a plain value that a worker thread can
  // take, and the call opens its own connection on the thread that writes (SQLite connections
  // are not shared between threads), before the measurement, so a bad store fails in a moment.
  std::string store_path;  // empty: measured, not stored
  std::string label;       // free text kept with the run
  std::string origin;      // kept in the run's params as "from" (the GUI's "p64lab"); empty: none
};

struct ExperimentProgress {
  ProgressFn convert;  // converting a GGUF, llama2.c or Hugging Face input (a .p64 needs none)
  ProgressFn setup;    // 0: opening the model, 0.5: loading the backend; false cancels
  ProgressFn measure;  // the measurement itself
};

// One depth of a sweep: its measurement, what its run stores as summary, and the run.
struct DepthPoint {
  int depth = 0;
  DecodeProxyResult decode_proxy;
  nlohmann::json summary;
  int64_t run_id = 0;  // 0: not stored
};

struct ExperimentOutcome {
  std::shared_ptr<const Model> model;
  std::string backend;  // resolved ("auto" -> "cpu")
  Passport passport;    // of the backend it ran on (passport.device.name: the device)
  double load_ms = 0;
  DecodeProxyResult decode_proxy;  // Measurement::DecodeProxy without depths
  std::vector<DepthPoint> depth_sweep;  // Measurement::DecodeProxy with depths, in the request's order
  TimelineResult timeline;         // Measurement::Timeline
  nlohmann::json summary;          // what the run stores as its summary (not for a sweep: see depth_sweep)
  int64_t run_id = 0;              // 0: not stored (or a sweep: see depth_sweep)
  std::string store_path;          // the store as opened; empty when not stored
};

// Throws p64::Error (bad config, model or switch; a backend without timeline spans),
// p64::Cancelled when a progress callback returns false.
ExperimentOutcome run_experiment(const ExperimentRequest& request, const ExperimentProgress& progress = {});

// An A/B of two configurations, each on request.model_path (or B on model_path_b).
struct AbExperimentRequest {
  std::string model_path;
  std::string tokenizer_path;          // llama2.c checkpoints only (both sides)
  std::shared_ptr<const Model> model;  // already open for model_path; else opened here
  std::string model_path_b;            // empty or model_path: B runs A's model (same vocabulary else)
  LabConfig a, b;
  std::string switch_name;  // the switch judged; must be one A and B set differently (judged_switch)
  AbParams params;
  std::string store_path;  // empty: judged without history, nothing stored
  // Rows the caller files with the A/B (an explore's cell), written in the A/B's own transaction:
  // stored together with the run or not at all.
  std::function<void(Store&, const StoredAb&)> also_store;
};

struct AbExperimentOutcome {
  std::shared_ptr<const Model> model_a, model_b;
  AbResult result;
  StoredAb stored;  // run_id 0 when nothing was stored
  std::string store_path;
  std::optional<ComparisonRecord> comparison;      // as read back from the store
  std::optional<OptimisationRecord> optimisation;  // the switch judged, after the verdict
  std::vector<OptimisationHistoryEntry> history;   // its dated changes, newest last
};

AbExperimentOutcome run_ab_experiment(const AbExperimentRequest& request, const ExperimentProgress& progress = {});

}  // namespace p64
