#include "engine/lab/explore.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/common/file_checks.h"
#include "engine/common/text.h"
#include "engine/lab/experiment.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/sha256.h"
#include "engine/lab/store.h"
#include "engine/lab/verdict.h"
#include "engine/runtime/backend_registry.h"
#include "engine/runtime/switch_table.h"

namespace p64 {
namespace fs = std::filesystem;
namespace {

// The fields a plan file may hold, in the order the help and the docs list them.
constexpr const char* kPlanFields[] = {"id",     "models", "tokenizer", "baseline",      "sets",
                                       "runs",   "warmup", "tokens",    "prompt_tokens", "quality_tokens"};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string set_label(size_t index, const std::string& set) {
  return "set " + std::to_string(index + 1) + " " + quoted(set);
}

// A set's switches as the config parser reads them; only opt.NAME=VALUE items.
LabConfig parse_set(size_t index, const std::string& set) {
  std::string_view rest = set;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = trim_blanks(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (!item.empty() && item.rfind("opt.", 0) != 0)
      throw Error("explore: " + set_label(index, set) + ": '" + std::string(item) +
                  "' is not opt.NAME=VALUE (a set changes switches; the backend, threads and device are the baseline's)");
  }
  try {
    return LabConfig::parse(set);
  } catch (const Error& e) {
    throw Error("explore: " + set_label(index, set) + ": " + e.what());
  }
}

// "opt.b=2, opt.a=1" -> "opt.a=1,opt.b=2": one spelling per set, so the same set is the same plan.
std::string canonical_set(size_t index, const std::string& set) {
  std::string out;
  for (const auto& [k, v] : parse_set(index, set).switches) out += (out.empty() ? "" : ",") + ("opt." + k + "=" + v);
  return out;
}

LabConfig parse_baseline(const std::string& baseline) {
  try {
    return LabConfig::parse(baseline);
  } catch (const Error& e) {
    throw Error("explore: baseline " + quoted(baseline) + ": " + e.what());
  }
}

std::string absolute_path(const std::string& path, const fs::path& base = {}) {
  fs::path p(path);
  if (p.is_relative() && !base.empty()) p = base / p;
  return fs::absolute(p).lexically_normal().string();
}

// Every plan in one spelling: absolute model paths, canonical baseline and sets.
ExplorePlan canonical(const ExplorePlan& plan) {
  ExplorePlan p = plan;
  for (auto& m : p.models) m = absolute_path(m);
  if (!p.tokenizer.empty()) p.tokenizer = absolute_path(p.tokenizer);
  p.baseline = parse_baseline(p.baseline).to_string();
  for (size_t i = 0; i < p.sets.size(); ++i) p.sets[i] = canonical_set(i, p.sets[i]);
  return p;
}

int whole_field(const nlohmann::json& j, const char* field, const std::string& file) {
  const auto& v = j.at(field);
  if (!v.is_number_integer()) throw Error(file + ": field '" + field + "' must be a whole number");
  const auto n = v.get<int64_t>();
  if (n < INT32_MIN || n > INT32_MAX) throw Error(file + ": field '" + field + "' is out of range");
  return static_cast<int>(n);
}

std::string text_field(const nlohmann::json& j, const char* field, const std::string& file) {
  const auto& v = j.at(field);
  if (!v.is_string()) throw Error(file + ": field '" + field + "' must be a string");
  return v.get<std::string>();
}

std::vector<std::string> text_list(const nlohmann::json& j, const char* field, const std::string& file) {
  const auto& v = j.at(field);
  std::vector<std::string> out;
  if (!v.is_array()) throw Error(file + ": field '" + field + "' must be a list of strings");
  for (const auto& x : v) {
    if (!x.is_string()) throw Error(file + ": field '" + field + "' must be a list of strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

void check_range(const char* field, int value, int min, int max) {
  if (value < min || value > max)
    throw Error("explore: " + std::string(field) + " " + std::to_string(value) + " is outside " + std::to_string(min) +
                ".." + std::to_string(max));
}

// The fields two plans differ in, for the error that refuses a name stored with another plan.
std::string differing_fields(const nlohmann::json& stored, const nlohmann::json& given) {
  std::string out;
  for (const auto& [key, value] : stored.items())
    if (!given.contains(key) || given.at(key) != value)
      out += (out.empty() ? "" : "; ") + key + " " + value.dump() + " there, " +
             (given.contains(key) ? given.at(key).dump() : "none") + " here";
  return out;
}

}  // namespace

std::vector<std::string> split_switch_sets(std::string_view text) {
  std::vector<std::string> sets;
  while (true) {
    const size_t semi = text.find(';');
    const std::string_view set = trim_blanks(text.substr(0, semi));
    if (set.empty())
      throw Error("explore: --sets: set " + std::to_string(sets.size() + 1) +
                  " is empty (sets are separated by ';', the switches of one set by ',': \"opt.a=1;opt.b=2,opt.c=0\")");
    sets.emplace_back(set);
    if (semi == std::string_view::npos) return sets;
    text = text.substr(semi + 1);
  }
}

ExplorePlan read_explore_plan(const std::string& path) {
  check_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the plan");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) throw Error(path + ": not JSON (an explore plan is a JSON object; see p64 explore --help)");
  if (!j.is_object()) throw Error(path + ": an explore plan is a JSON object");
  std::string known;
  for (const char* f : kPlanFields) known += (known.empty() ? "" : ", ") + std::string(f);
  for (const auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* f : kPlanFields) ok = ok || key == f;
    if (!ok) throw Error(path + ": unknown field '" + key + "' (fields: " + known + ")");
  }
  const fs::path folder = fs::absolute(fs::path(path)).parent_path();
  ExplorePlan p;
  if (j.contains("id")) p.name = text_field(j, "id", path);
  if (j.contains("models"))
    for (const auto& m : text_list(j, "models", path)) p.models.push_back(absolute_path(m, folder));
  if (j.contains("tokenizer")) p.tokenizer = absolute_path(text_field(j, "tokenizer", path), folder);
  if (j.contains("baseline")) p.baseline = text_field(j, "baseline", path);
  if (j.contains("sets")) p.sets = text_list(j, "sets", path);
  if (j.contains("runs")) p.runs = whole_field(j, "runs", path);
  if (j.contains("warmup")) p.warmup = whole_field(j, "warmup", path);
  if (j.contains("tokens")) p.tokens = whole_field(j, "tokens", path);
  if (j.contains("prompt_tokens")) p.prompt_tokens = whole_field(j, "prompt_tokens", path);
  if (j.contains("quality_tokens")) p.quality_tokens = whole_field(j, "quality_tokens", path);
  return p;
}

void check_explore_plan(const ExplorePlan& plan) {
  if (plan.models.empty()) throw Error("explore: no model (--models a.p64,b.p64, or \"models\" in the plan)");
  if (plan.sets.empty()) throw Error("explore: no switch set (--sets \"opt.a=1;opt.b=2\", or \"sets\" in the plan)");
  std::set<std::string> seen_models;
  for (size_t i = 0; i < plan.models.size(); ++i) {
    const std::string& m = plan.models[i];
    const std::string label = "explore: model " + std::to_string(i + 1) + " " + quoted(m);
    std::error_code ec;
    const fs::file_status st = fs::status(m, ec);
    if (!fs::exists(st)) throw Error(label + ": no such file or folder");
    if (!fs::is_directory(st)) {  // a Hugging Face model is a folder
      try {
        check_input_file(m);
      } catch (const Error& e) {
        throw Error(label + ": " + e.what());
      }
    }
    if (!seen_models.insert(absolute_path(m)).second) throw Error(label + ": named twice");
  }
  check_range("runs", plan.runs, 2, 1000);
  check_range("warmup", plan.warmup, 0, 1000);
  check_range("tokens", plan.tokens, 1, 1 << 20);
  check_range("prompt_tokens", plan.prompt_tokens, 1, 1 << 20);
  check_range("quality_tokens", plan.quality_tokens, 1, 1 << 20);

  const LabConfig a = parse_baseline(plan.baseline);
  std::vector<SwitchInfo> table;
  try {
    table = backend_switch_table(a.backend);  // names the backends built when it is not one
    SwitchValues(resolve_backend_name(a.backend), table, a.switches);
  } catch (const Error& e) {
    throw Error("explore: baseline " + quoted(plan.baseline) + ": " + e.what());
  }
  std::map<std::string, size_t> seen_sets;
  for (size_t i = 0; i < plan.sets.size(); ++i) {
    const LabConfig set = parse_set(i, plan.sets[i]);
    if (set.switches.empty()) throw Error("explore: " + set_label(i, plan.sets[i]) + " names no switch");
    const LabConfig b = explore_config_b(plan, i);
    try {
      SwitchValues(resolve_backend_name(a.backend), table, b.switches);
    } catch (const Error& e) {
      throw Error("explore: " + set_label(i, plan.sets[i]) + ": " + e.what());
    }
    if (differing_switches(a, b).empty())
      throw Error("explore: " + set_label(i, plan.sets[i]) +
                  " changes nothing: the baseline runs these values already (a switch left out runs at its backend's "
                  "default)");
    const auto [it, fresh] = seen_sets.emplace(b.to_string(), i);
    if (!fresh)
      throw Error("explore: sets " + std::to_string(it->second + 1) + " and " + std::to_string(i + 1) +
                  " are the same (" + b.to_string() + ")");
  }
}

nlohmann::json explore_plan_json(const ExplorePlan& plan) {
  const ExplorePlan p = canonical(plan);
  return {{"models", p.models},
          {"tokenizer", p.tokenizer},
          {"baseline", p.baseline},
          {"sets", p.sets},
          {"runs", p.runs},
          {"warmup", p.warmup},
          {"tokens", p.tokens},
          {"prompt_tokens", p.prompt_tokens},
          {"quality_tokens", p.quality_tokens}};
}

ExplorePlan explore_plan_from_json(const std::string& name, const std::string& plan_json) {
  const nlohmann::json j = nlohmann::json::parse(plan_json, nullptr, false);
  const std::string what = "explore '" + name + "' in the lab store";
  if (!j.is_object()) throw Error(what + ": its plan is not a JSON object");
  ExplorePlan p;
  p.name = name;
  try {
    p.models = j.at("models").get<std::vector<std::string>>();
    p.tokenizer = j.at("tokenizer").get<std::string>();
    p.baseline = j.at("baseline").get<std::string>();
    p.sets = j.at("sets").get<std::vector<std::string>>();
    p.runs = j.at("runs").get<int>();
    p.warmup = j.at("warmup").get<int>();
    p.tokens = j.at("tokens").get<int>();
    p.prompt_tokens = j.at("prompt_tokens").get<int>();
    p.quality_tokens = j.at("quality_tokens").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(what + ": its plan lacks a field or has one of another type (" + e.what() + ")");
  }
  return p;
}

std::string explore_name(const ExplorePlan& plan) {
  if (!plan.name.empty()) return plan.name;
  const std::string text = explore_plan_json(plan).dump();
  return "x-" + sha256_hex(text.data(), text.size()).substr(0, 12);
}

LabConfig explore_config_a(const ExplorePlan& plan) { return parse_baseline(plan.baseline); }

LabConfig explore_config_b(const ExplorePlan& plan, size_t set_index) {
  LabConfig b = explore_config_a(plan);
  for (const auto& [k, v] : parse_set(set_index, plan.sets.at(set_index)).switches) b.switches[k] = v;
  return b;
}

const ExploreCell* ExploreMatrix::cell(size_t model_index, size_t set_index) const {
  for (const auto& c : cells)
    if (c.model_index == model_index && c.set_index == set_index) return &c;
  return nullptr;
}

bool ExploreCell::significant() const { return p_value < VerdictRules{}.alpha; }

ExploreMatrix load_explore_matrix(const Store& store, const std::string& name) {
  const std::optional<ExploreRecord> e = store.explore(name);
  if (!e) throw Error(store.path() + ": no explore '" + name + "' (p64 explore list shows the stored ones)");
  ExploreMatrix m;
  m.name = e->name;
  m.plan = explore_plan_from_json(e->name, e->plan_json);
  m.created_at = e->created_at;
  for (const ExploreCellRecord& rec : store.explore_cells(e->id)) {
    if (rec.model_index < 0 || static_cast<size_t>(rec.model_index) >= m.rows() || rec.set_index < 0 ||
        static_cast<size_t>(rec.set_index) >= m.columns())
      continue;  // outside its own plan: not a cell of this matrix
    ExploreCell c;
    c.model_index = static_cast<size_t>(rec.model_index);
    c.set_index = static_cast<size_t>(rec.set_index);
    c.run_id = rec.run_id;
    if (auto cmp = store.comparison_for_run(rec.run_id)) c.comparison = *cmp;
    if (auto run = store.run(rec.run_id)) {
      const auto summary = nlohmann::json::parse(run->summary_json, nullptr, false);
      if (summary.is_object()) {
        c.busy = summary.value("busy", false);
        if (summary.contains("test") && summary["test"].is_object())
          c.p_value = summary["test"].value("p_value", 1.0);
      }
    }
    m.cells.push_back(std::move(c));
  }
  return m;
}

ExploreOutcome run_explore(const ExplorePlan& given, const ExploreOptions& options, const ExploreCallbacks& cb) {
  check_explore_plan(given);  // before the store is opened: a bad plan leaves it as it was
  const nlohmann::json plan_json = explore_plan_json(given);
  const std::string name = explore_name(given);
  const ExplorePlan plan = explore_plan_from_json(name, plan_json.dump());
  if (options.store_path.empty()) throw Error("explore: no lab store (every cell is stored, so it can resume)");
  auto store = Store::open(options.store_path);
  std::set<std::pair<size_t, size_t>> stored;
  std::optional<ExploreRecord> known = store->explore(name);
  if (known) {
    const nlohmann::json was = nlohmann::json::parse(known->plan_json, nullptr, false);
    if (was != plan_json)
      throw Error(store->path() + ": explore '" + name + "' was started with another plan (" +
                  differing_fields(was, plan_json) + "); resume it with --id " + name +
                  " alone, or give this plan another --id");
    for (const auto& c : store->explore_cells(known->id))
      stored.emplace(static_cast<size_t>(c.model_index), static_cast<size_t>(c.set_index));
  }

  const size_t rows = plan.models.size(), columns = plan.sets.size(), total = rows * columns;
  std::vector<std::vector<size_t>> pending(rows);
  size_t pending_total = 0;
  for (size_t m = 0; m < rows; ++m)
    for (size_t s = 0; s < columns; ++s)
      if (!stored.count({m, s})) {
        pending[m].push_back(s);
        ++pending_total;
      }
  const size_t will_run = options.max_cells ? std::min(options.max_cells, pending_total) : pending_total;

  // The models this call measures, opened before the explore is filed: a model that does not open
  // stops it before anything is written.
  const LabConfig a = explore_config_a(plan);
  std::vector<std::shared_ptr<const Model>> models(rows);
  for (size_t m = 0, opened = 0; m < rows && opened < will_run; ++m) {
    if (pending[m].empty()) continue;
    models[m] = open_lab_model(plan.models[m], a.backend, plan.tokenizer, cb.convert);
    opened += pending[m].size();
  }
  const int64_t explore_id = known ? known->id : store->insert_explore(name, plan_json.dump());

  ExploreOutcome out;
  out.cells_skipped = stored.size();
  if (cb.started) cb.started(plan, stored.size());
  if (known && cb.cell_skipped) {
    const ExploreMatrix before = load_explore_matrix(*store, name);
    for (const ExploreCell& c : before.cells) {
      ExploreCellEvent ev;
      ev.index = c.model_index * columns + c.set_index;
      ev.total = total;
      ev.model_index = c.model_index;
      ev.set_index = c.set_index;
      ev.stored = before.cells.size();
      ev.to_run = will_run;
      ev.result = &c;
      cb.cell_skipped(ev);
    }
  }
  AbParams params;
  params.runs = plan.runs;
  params.warmup = plan.warmup;
  params.decode_tokens = plan.tokens;
  params.prompt_tokens = plan.prompt_tokens;
  params.quality_tokens = plan.quality_tokens;
  double spent_s = 0;
  for (size_t m = 0; m < rows && out.cells_run < will_run; ++m) {
    for (const size_t s : pending[m]) {
      if (out.cells_run == will_run) break;
      ExploreCellEvent ev;
      ev.index = m * columns + s;
      ev.total = total;
      ev.model_index = m;
      ev.set_index = s;
      ev.stored = stored.size() + out.cells_run;
      ev.to_run = will_run - out.cells_run;
      ev.eta_s = out.cells_run ? spent_s / static_cast<double>(out.cells_run) * static_cast<double>(ev.to_run) : -1;
      if (cb.cell_started) cb.cell_started(ev);
      if (cb.measure && !cb.measure(0, "starting")) throw Cancelled();
      const auto t0 = std::chrono::steady_clock::now();
      AbExperimentRequest req;
      req.model_path = plan.models[m];
      req.tokenizer_path = plan.tokenizer;
      req.model = models[m];
      req.a = a;
      req.b = explore_config_b(plan, s);
      req.params = params;
      req.store_path = store->path();
      req.also_store = [&](Store& st, const StoredAb& ab) {
        st.add_explore_cell({explore_id, static_cast<int32_t>(m), static_cast<int32_t>(s), ab.run_id});
      };
      const AbExperimentOutcome ab = run_ab_experiment(req, {cb.convert, {}, cb.measure});
      spent_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++out.cells_run;
      ExploreCell cell;
      cell.model_index = m;
      cell.set_index = s;
      cell.run_id = ab.stored.run_id;
      if (ab.comparison) cell.comparison = *ab.comparison;
      cell.p_value = ab.stored.outcome.p_value;
      cell.busy = ab.result.a.busy.busy || ab.result.b.busy.busy;
      ev.result = &cell;
      ev.to_run = will_run - out.cells_run;
      ev.eta_s = ev.to_run ? spent_s / static_cast<double>(out.cells_run) * static_cast<double>(ev.to_run) : 0;
      if (cb.cell_done) cb.cell_done(ev);
    }
  }
  out.stopped_at_limit = will_run < pending_total;
  out.matrix = load_explore_matrix(*store, name);
  return out;
}

}  // namespace p64
