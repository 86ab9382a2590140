#pragma once
// The A/B the workbench starts, on a worker thread, through the engine call `p64 ab` makes
// (run_ab_experiment, engine/lab/experiment.h): both configurations measured interleaved, the
// quality gates, the verdict, then, with a store, the run, its comparison and the optimisation
// history entry written in one transaction and read back, so the page can show what was recorded.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/progress.h"
#include "engine/lab/ab.h"
#include "engine/lab/store_types.h"
#include "engine/lab/timeline_run.h"

namespace p64 {
class Model;
}

namespace p64::ui {

struct AbRequest {
  std::string model_path;              // A's model (and B's, unless model_path_b names another)
  std::shared_ptr<const Model> model;  // the open model when it is that file; else opened here
  std::string model_path_b;            // empty: B runs A's model; else B's own (same vocabulary)
  std::string config_a = "backend=cpu";
  std::string config_b;
  std::string store_path;  // empty = judge only, store nothing
  AbParams params;
  bool op_split = false;  // after the A/B, a timeline of each side for the per-op split (not stored)
  TimelineParams split_params;
};

struct AbOutcome {
  AbResult result;
  StoredAb stored;                               // run_id 0 when nothing was stored
  std::optional<ComparisonRecord> comparison;    // as read back from the store
  std::optional<OptimisationRecord> optimisation;  // the switch judged, after the verdict
  std::vector<OptimisationHistoryEntry> history;   // its dated changes, newest last
  std::vector<OpSpan> split_a, split_b;            // with op_split: each side's timeline spans
};

AbOutcome run_ab_session(const AbRequest& request, const ProgressFn& progress);

// "backend=NAME" joined with the option text ("opt.kv_f16=1,threads=2"); blank options allowed.
std::string compose_config(const std::string& backend, const std::string& options);

}  // namespace p64::ui
