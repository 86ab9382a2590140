// p64 explore: a matrix of models x switch sets, each cell an interleaved A/B of the baseline
// against one set, stored cell by cell so that an interrupted explore resumes.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/explore_table.h"
#include "app/cli/interrupt.h"
#include "app/cli/progress_line.h"
#include "engine/common/error.h"
#include "engine/lab/explore.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

struct Args {
  std::string plan_file;
  std::vector<std::string> models;
  std::string sets;
  std::string backend;
  std::string baseline;
  std::string tokenizer;
  ExplorePlan plan;  // holds the flags' values (and the defaults)
  std::string id;
  std::string show_id;
  size_t max_cells = 0;
  bool json = false;
  std::string db = default_store_path();
};

constexpr const char* kFooter = R"(Each cell is an A/B (`p64 ab`) of the baseline A against B = A + one set, on one model: the
same interleaving, quality gate, verdict rule and optimisation history. Each cell is stored with its
A/B run as it ends, under the explore's id (--id, the plan's "id", else one derived from the plan:
the same plan gives the same id). Run the same command again, or `p64 explore --id ID` alone, and
the cells already stored are skipped. Ctrl-C stops it: the cell being measured is not stored.

Examples:
  p64 explore --models a.p64,b.p64 --sets "opt.kv_f16=1;opt.int8_activations=0" --backend cpu
  p64 explore --plan nightly.json
  p64 explore show nightly
A plan file (model paths relative to its folder; every field but models and sets optional):
  {"id": "nightly", "models": ["a.p64", "b.gguf"], "baseline": "backend=cpu",
   "sets": ["opt.kv_f16=1", "opt.int8_activations=0"],
   "runs": 5, "warmup": 1, "tokens": 32, "prompt_tokens": 32, "quality_tokens": 32})";

std::string file_name(const std::string& path) {
  const auto slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string duration_text(double s) {
  if (s < 0) return "?";
  const long t = static_cast<long>(s + 0.5);
  char text[32];
  if (t >= 3600) std::snprintf(text, sizeof text, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60) std::snprintf(text, sizeof text, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(text, sizeof text, "%lds", t);
  return text;
}

// The plan from --plan, from the flags, or, with --id alone, the one stored under that id.
ExplorePlan plan_of(const Args& a, const std::vector<const CLI::Option*>& matrix_flags) {
  bool any_flag = false;
  for (const CLI::Option* o : matrix_flags) any_flag = any_flag || o->count() > 0;
  ExplorePlan p;
  if (!a.plan_file.empty()) {
    for (const CLI::Option* o : matrix_flags)
      if (o->count() > 0)
        throw Error("explore: " + o->get_name() + " and --plan " + a.plan_file +
                    ": give the matrix in one place (the plan file's fields)");
    p = read_explore_plan(a.plan_file);
  } else if (!any_flag && !a.id.empty()) {
    auto store = Store::open(a.db);
    p = load_explore_matrix(*store, a.id).plan;
  } else {
    p = a.plan;
    p.models = a.models;
    if (!a.sets.empty()) p.sets = split_switch_sets(a.sets);
    if (!a.baseline.empty()) p.baseline = a.baseline;
    if (!a.backend.empty()) {
      LabConfig base = LabConfig::parse(p.baseline);
      base.backend = a.backend;
      p.baseline = base.to_string();
    }
    p.tokenizer = a.tokenizer;
  }
  if (!a.id.empty()) p.name = a.id;
  return p;
}

void run(const Args& a, const std::vector<const CLI::Option*>& matrix_flags) {
  const ExplorePlan plan = plan_of(a, matrix_flags);
  install_interrupt_handler();
  set_generating(true);
  const ProgressFn line = stderr_progress_line("  A/B");
  ExploreCallbacks cb;
  cb.convert = stderr_progress_line("convert");
  cb.measure = [line](double f, std::string_view what) { return !interrupt_requested() && line(f, what); };
  ExplorePlan shown;  // as filed: canonical sets, the id
  cb.started = [&shown](const ExplorePlan& p, size_t stored) {
    shown = p;
    const size_t total = p.models.size() * p.sets.size();
    std::fprintf(stderr, "p64: explore %s: %zu models x %zu sets = %zu cells, %zu stored before, %zu to run%s\n",
                 p.name.c_str(), p.models.size(), p.sets.size(), total, stored, total - stored,
                 stored ? " (resuming)" : "");
    std::fprintf(stderr, "p64: Ctrl-C stops it (the cell being measured is not stored); rerun to resume\n");
  };
  auto where = [&shown](const ExploreCellEvent& e) {
    return file_name(shown.models.at(e.model_index)) + " x [" + std::to_string(e.set_index + 1) + "] " +
           shown.sets.at(e.set_index);
  };
  cb.cell_skipped = [&](const ExploreCellEvent& e) {
    std::fprintf(stderr, "p64: cell %zu/%zu %s: stored before (run %lld), skipped\n", e.index + 1, e.total,
                 where(e).c_str(), static_cast<long long>(e.result ? e.result->run_id : 0));
  };
  cb.cell_started = [&](const ExploreCellEvent& e) {
    std::fprintf(stderr, "p64: cell %zu/%zu %s (ETA %s)\n", e.index + 1, e.total, where(e).c_str(),
                 duration_text(e.eta_s).c_str());
  };
  cb.cell_done = [&](const ExploreCellEvent& e) {
    const ExploreCell& c = *e.result;
    std::fprintf(stderr, "p64: cell %zu/%zu done: B/A %.3f, %s (p %.3g), run %lld; %zu left to run, ETA %s\n",
                 e.index + 1, e.total, c.comparison.ratio_median, std::string(to_string(c.comparison.verdict)).c_str(),
                 c.p_value, static_cast<long long>(c.run_id), e.to_run, duration_text(e.eta_s).c_str());
  };
  ExploreOptions options;
  options.store_path = a.db;
  options.max_cells = a.max_cells;
  ExploreOutcome out;
  try {
    out = run_explore(plan, options, cb);
  } catch (const Cancelled&) {
    auto store = Store::open(a.db);
    const ExploreMatrix m = load_explore_matrix(*store, explore_name(plan));
    std::fprintf(stderr, "\np64: explore %s interrupted; the cell being measured was not stored. %zu of %zu cells are "
                         "stored in %s: rerun `p64 explore --id %s --db %s` to measure the rest\n",
                 m.name.c_str(), m.cells.size(), m.size(), a.db.c_str(), m.name.c_str(), a.db.c_str());
    throw;
  }
  if (out.stopped_at_limit)
    std::fprintf(stderr, "p64: stopped after %zu cell(s) (--max-cells); %zu of %zu cells stored: rerun to go on\n",
                 out.cells_run, out.matrix.cells.size(), out.matrix.size());
  if (a.json) {
    nlohmann::json j = explore_matrix_json(out.matrix);
    j["cells_run"] = out.cells_run;
    j["cells_skipped"] = out.cells_skipped;
    std::cout << json_text(j, 2) << "\n";
    return;
  }
  print_explore_matrix(out.matrix, a.db);
}

void show_matrix(const Args& a) {
  auto store = Store::open(a.db);
  const ExploreMatrix m = load_explore_matrix(*store, a.show_id);
  if (a.json) std::cout << json_text(explore_matrix_json(m), 2) << "\n";
  else print_explore_matrix(m, a.db);
}

void list_explores(const Args& a) {
  auto store = Store::open(a.db);
  std::printf("%-24s %-20s %6s %6s %8s\n", "id", "created", "models", "sets", "measured");
  for (const ExploreRecord& e : store->explores()) {
    const ExploreMatrix m = load_explore_matrix(*store, e.name);
    std::printf("%-24s %-20s %6zu %6zu %4zu/%-3zu\n", m.name.c_str(), m.created_at.c_str(), m.rows(), m.columns(),
                m.cells.size(), m.size());
  }
}

const CommandRegistration reg(43, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand(
      "explore", "A matrix of models x switch sets, each cell an interleaved A/B with verdict; resumable");
  c->footer(kFooter);
  std::vector<const CLI::Option*> matrix_flags;
  c->add_option("--plan", a->plan_file, "Plan file (JSON, see below) naming the models, sets and parameters")
      ->check(CLI::ExistingFile);
  matrix_flags.push_back(c->add_option("--models", a->models, "Model files, comma-separated (rows)")->delimiter(','));
  matrix_flags.push_back(
      c->add_option("--sets", a->sets, "Switch sets (columns): ';' between sets, ',' inside one: \"opt.a=1;opt.b=2,opt.c=0\""));
  matrix_flags.push_back(c->add_option("--backend", a->backend, "The baseline's backend (without it and --baseline: auto)"));
  matrix_flags.push_back(
      c->add_option("--baseline", a->baseline, "Config A, e.g. \"backend=cpu,threads=4\" (without it: backend=auto)"));
  matrix_flags.push_back(c->add_option("--tokenizer", a->tokenizer, "Tokenizer for llama2.c checkpoints"));
  matrix_flags.push_back(
      c->add_option("--runs", a->plan.runs, "Measured runs per side and cell (>= 2)")->capture_default_str());
  matrix_flags.push_back(c->add_option("--warmup", a->plan.warmup, "Untimed runs per side first")->capture_default_str());
  matrix_flags.push_back(c->add_option("--tokens", a->plan.tokens, "Decode steps per run")->capture_default_str());
  matrix_flags.push_back(c->add_option("--prompt-tokens", a->plan.prompt_tokens, "Prompt length")->capture_default_str());
  matrix_flags.push_back(c->add_option("--quality-tokens", a->plan.quality_tokens,
                                       "Teacher-forced positions for the quality gate")->capture_default_str());
  c->add_option("--id", a->id, "The explore's id: resumes the one stored under it (alone: with its stored plan)");
  c->add_option("--max-cells", a->max_cells, "Measure at most this many cells now, then stop (0: all)")
      ->capture_default_str();
  c->add_flag("--json", a->json, "Print the matrix as JSON")->capture_default_str();
  c->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();

  CLI::App* show = c->add_subcommand("show", "Print a stored explore matrix");
  show->add_option("id", a->show_id, "Explore id")->required();
  show->add_flag("--json", a->json, "Print JSON")->capture_default_str();
  show->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  CLI::App* list = c->add_subcommand("list", "List the stored explores");
  list->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  c->callback([a, show, list, matrix_flags] {
    if (show->parsed()) return show_matrix(*a);
    if (list->parsed()) return list_explores(*a);
    run(*a, matrix_flags);
  });
});

}  // namespace
}  // namespace p64::cli
