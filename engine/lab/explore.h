#pragma once
// The explore matrix (the plan's L6, "continuous A/B harness"): models x switch sets, each cell
// an A/B of the baseline (A) against the baseline with one set's switches (B) on one model,
// measured, judged and stored by the A/B's own path (run_ab_experiment: the same interleaving,
// quality gate, verdict and optimisation history). Every cell is stored with its run in one
// transaction under the explore's name, so an explore stopped by Ctrl-C, a kill or a limit
// resumes where it stopped: cells already stored are not measured again.
//
// The CLI (`p64 explore`) and a GUI item model read a stored matrix the same way, through
// load_explore_matrix().
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/common/progress.h"
#include "engine/lab/lab_config.h"
#include "engine/lab/store_types.h"

namespace p64 {
class Store;

struct ExplorePlan {
  std::string name;                 // the explore id; empty: explore_name() derives one from the plan
  std::vector<std::string> models;  // model files (any format decode reads), rows of the matrix
  std::string tokenizer;            // llama2.c checkpoints only
  std::string baseline = "backend=auto";  // A, a LabConfig string
  std::vector<std::string> sets;    // columns: "opt.NAME=VALUE[,opt.NAME=VALUE...]"; B = baseline + the set
  int runs = 5;                     // per side and cell (AbParams)
  int warmup = 1;
  int tokens = 32;
  int prompt_tokens = 32;
  int quality_tokens = 32;
};

// "opt.a=1;opt.b=2,opt.c=0" -> {"opt.a=1", "opt.b=2,opt.c=0"}: ';' between sets, ',' between the
// switches of one set. Throws p64::Error on an empty set.
std::vector<std::string> split_switch_sets(std::string_view text);

// A plan file (JSON; docs/user-guide.md shows one). Model paths that are not absolute are taken
// from the plan file's folder. Throws p64::Error naming the file and the field.
ExplorePlan read_explore_plan(const std::string& path);

// Checks what can be checked before anything is opened or measured: at least one model and one
// set, each model present, the baseline and every set parsed, each set only opt.NAME=VALUE items
// whose switches the baseline's backend offers with allowed values, each set changing something
// the baseline does not, no set twice, the A/B parameters in range. Throws p64::Error naming
// the model, the set or the field.
void check_explore_plan(const ExplorePlan& plan);

// What identifies a plan (everything but its name), as stored: a rerun must match it.
nlohmann::json explore_plan_json(const ExplorePlan& plan);
ExplorePlan explore_plan_from_json(const std::string& name, const std::string& plan_json);
// The plan's name, else "x-" and 12 hex digits of the SHA-256 of explore_plan_json: the same
// models, sets and parameters give the same explore, which a rerun resumes.
std::string explore_name(const ExplorePlan& plan);

LabConfig explore_config_a(const ExplorePlan& plan);
LabConfig explore_config_b(const ExplorePlan& plan, size_t set_index);

struct ExploreCell {
  size_t model_index = 0, set_index = 0;
  int64_t run_id = 0;  // the A/B run
  ComparisonRecord comparison;  // its verdict, B/A and medians
  double p_value = 1;  // the test's two-sided p (summary_json.test)
  bool busy = false;   // the machine was busy during the A/B
  bool significant() const;  // p below the verdict rules' alpha (verdict.h)
};

struct ExploreMatrix {
  std::string name;
  ExplorePlan plan;
  std::string created_at;
  std::vector<ExploreCell> cells;  // the stored cells, by model then set
  size_t rows() const { return plan.models.size(); }
  size_t columns() const { return plan.sets.size(); }
  size_t size() const { return rows() * columns(); }
  const ExploreCell* cell(size_t model_index, size_t set_index) const;  // nullptr: not measured yet
};

// The explore stored under `name`, with every cell measured so far. Throws p64::Error naming the
// store and the name when there is none.
ExploreMatrix load_explore_matrix(const Store& store, const std::string& name);

// One cell as it starts or ends: `index` counts from 0 over the whole matrix (model-major).
struct ExploreCellEvent {
  size_t index = 0, total = 0;
  size_t model_index = 0, set_index = 0;
  size_t stored = 0;   // cells stored so far, before this one
  size_t to_run = 0;   // cells this invocation still has to run, this one included
  double eta_s = -1;   // the mean cell time of this invocation x to_run; -1 before a cell has ended
  const ExploreCell* result = nullptr;  // at the end of a cell
};

struct ExploreCallbacks {
  std::function<void(const ExplorePlan&, size_t already_stored)> started;  // after the plan is filed
  // A cell stored before this call (`result` is it), then each cell this call measures.
  std::function<void(const ExploreCellEvent&)> cell_skipped, cell_started, cell_done;
  ProgressFn convert;  // converting a model that is not a .p64
  ProgressFn measure;  // within a cell; false stops the explore (p64::Cancelled), the cell unstored
};

struct ExploreOptions {
  std::string store_path;
  size_t max_cells = 0;  // 0: all; else stop after this many cells measured by this call
};

struct ExploreOutcome {
  ExploreMatrix matrix;     // as stored at the end
  size_t cells_run = 0;     // by this call
  size_t cells_skipped = 0; // stored before this call
  bool stopped_at_limit = false;  // max_cells ended it with cells left
};

// Files the plan under explore_name(plan) (or checks that the name's stored plan is this one),
// then measures each cell not stored yet, model by model. Throws p64::Error for a bad plan or a
// name stored with another plan (before anything is measured), p64::Cancelled when a callback
// asks to stop: the cells stored before stay stored.
ExploreOutcome run_explore(const ExplorePlan& plan, const ExploreOptions& options, const ExploreCallbacks& callbacks = {});

}  // namespace p64
