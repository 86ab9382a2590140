// p64 runs: list stored runs; `p64 runs show ID` for one run's details, `p64 runs diff A B` for
// two runs' per-op times side by side (or `p64 runs diff AB` for an A/B's two sides), `p64 runs
// compare --baseline REV` for decode speed between two builds, `p64 runs revisions` for the builds.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "app/cli/commit_compare_table.h"
#include "engine/common/error.h"
#include "engine/lab/depth_sweep.h"
#include "engine/lab/run_diff.h"
#include "engine/lab/stats.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

struct Args {
  std::string db = default_store_path();
  std::string model, kind;
  int64_t id = 0;
  std::vector<int64_t> diff_ids;
  std::string baseline, against;
  bool check = false;
  bool json = false;
};

double median_tok_s(const Store& s, int64_t run_id) {
  std::vector<double> v;
  for (const auto& x : s.samples(run_id)) v.push_back(x.decode_tok_s);
  return min_median_max(v).median;
}

std::string ratio_text(double r) {
  char t[16];
  if (r > 0) std::snprintf(t, sizeof t, "%.3f", r);
  else std::snprintf(t, sizeof t, "-");
  return t;
}

void print_op_row(const OpDelta& o) {
  std::printf("  %-16s %-7s %10.4f %10.4f %+10.4f %7s%s\n", o.name.c_str(), o.group.c_str(), o.a_ms, o.b_ms,
              o.delta_ms(), ratio_text(o.ratio()).c_str(), !o.in_a ? "  (only in B)" : !o.in_b ? "  (only in A)" : "");
}

nlohmann::json op_json(const OpDelta& o) {
  return {{"name", o.name}, {"group", o.group}, {"a_ms", o.a_ms}, {"b_ms", o.b_ms}, {"delta_ms", o.delta_ms()},
          {"ratio", o.ratio()}, {"in_a", o.in_a}, {"in_b", o.in_b}};
}

void print_diff(const Store& store, const std::vector<int64_t>& ids, bool json) {
  const RunDiff d = ids.size() == 1 ? diff_ab_sides(store, ids[0]) : diff_runs(store, ids[0], ids[1]);
  if (json) {
    nlohmann::json j = {{"a", d.a_label}, {"b", d.b_label}, {"a_run", d.a.id}, {"b_run", d.b.id},
                        {"a_steps", d.a_steps}, {"b_steps", d.b_steps}, {"note", d.note}};
    for (const auto& f : d.figures) j["figures"].push_back({{"name", f.name}, {"a", f.a}, {"b", f.b}, {"ratio", f.ratio()}});
    j["ops"] = nlohmann::json::array();
    for (const auto& o : d.ops) j["ops"].push_back(op_json(o));
    for (const auto& g : d.groups) j["groups"].push_back(op_json(g));
    if (d.total) j["total"] = op_json(*d.total);
    if (d.verdict) j["verdict"] = {{"verdict", std::string(to_string(d.verdict->verdict))}, {"ratio", d.verdict->ratio_median}};
    std::cout << json_text(j, 2) << "\n";
    return;
  }
  std::printf("A: %s\nB: %s\n\n", d.a_label.c_str(), d.b_label.c_str());
  std::printf("  %-16s %10s %10s %7s\n", "", "A", "B", "B/A");
  for (const auto& f : d.figures)
    std::printf("  %-16s %10.2f %10.2f %7s\n", f.name.c_str(), f.a, f.b, ratio_text(f.ratio()).c_str());
  if (d.verdict)
    std::printf("  verdict: %s, B/A %.3f (%s)\n", std::string(to_string(d.verdict->verdict)).c_str(),
                d.verdict->ratio_median, d.verdict->reason.c_str());
  if (!d.note.empty()) std::printf("\n  %s\n", d.note.c_str());
  if (d.ops.empty()) return;
  std::printf("\n  per decode step (A: %d steps, B: %d steps), ms summed over layers\n", d.a_steps, d.b_steps);
  std::printf("  %-16s %-7s %10s %10s %10s %7s\n", "op", "group", "A ms", "B ms", "delta ms", "B/A");
  for (const auto& o : d.ops) print_op_row(o);
  std::printf("\n");
  for (const auto& g : d.groups) print_op_row(g);
  if (d.total) print_op_row(*d.total);
}

const CommandRegistration reg(45, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("runs", "List the runs in the lab store");
  c->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  c->add_option("--model", a->model, "Model path/name substring or sha256 prefix");
  c->add_option("--kind", a->kind, "decode-proxy | timeline | ab | chat");
  CLI::App* show = c->add_subcommand("show", "Details of one run");
  show->add_option("id", a->id, "Run id")->required();
  show->add_flag("--json", a->json, "Print JSON")->capture_default_str();
  CLI::App* diff = c->add_subcommand(
      "diff", "Two runs side by side: per-op ms per decode step (timeline runs) and headline figures; one A/B run: its two sides");
  diff->add_option("runs", a->diff_ids, "RUN_A RUN_B (two timeline runs), or one A/B run")->required()->expected(1, 2);
  diff->add_flag("--json", a->json, "Print JSON")->capture_default_str();
  diff->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  CLI::App* compare = c->add_subcommand(
      "compare", "Decode tok/s between two builds: each model/backend/device/config both measured, tested and flagged past 2%");
  compare->add_option("--baseline", a->baseline, "Revision A (a prefix of a stored git revision; see `runs revisions`)")
      ->required();
  compare->add_option("--against", a->against, "Revision B (default: the newest stored revision other than A)");
  compare->add_option("--model", a->model, "Model path/name substring");
  compare->add_flag("--check", a->check, "Exit 1 when a group regressed past the 2% rule");
  compare->add_flag("--json", a->json, "Print JSON");
  compare->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  compare->footer(
      "A group is one model file, backend, device, configuration and prompt+decode token count; its stored decode-proxy "
      "runs of each revision are pooled (every repetition a sample) and compared by the A/B rule's Mann-Whitney test. "
      "Builds record their revision (git rev-parse --short=12) in every run.");
  CLI::App* revisions = c->add_subcommand("revisions", "The builds (git revisions) the store holds decode-proxy runs of");
  revisions->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  c->callback([a, show, diff, compare, revisions] {
    auto store = Store::open(a->db);
    if (diff->parsed()) return print_diff(*store, a->diff_ids, a->json);
    if (revisions->parsed()) return print_revisions(stored_revisions(*store), a->db);
    if (compare->parsed()) {
      const CommitCompare cc = compare_commits(*store, a->baseline, a->against, a->model);
      if (a->json) std::cout << json_text(commit_compare_json(cc), 2) << "\n";
      else print_commit_compare(cc);
      if (a->check && cc.regressions() > 0) set_exit_code(1);
      return;
    }
    if (show->parsed()) {
      auto r = store->run(a->id);
      if (!r) throw Error(a->db + ": no run " + std::to_string(a->id));
      nlohmann::json j = {{"id", r->id}, {"kind", std::string(to_string(r->kind))}, {"status", std::string(to_string(r->status))},
                          {"backend", r->backend}, {"device", r->device}, {"config", r->config},
                          {"git_revision", r->git_revision}, {"started_at", r->started_at}, {"finished_at", r->finished_at},
                          {"label", r->label}, {"imported", r->imported}, {"uid", r->uid},
                          {"options", nlohmann::json::parse(r->options_json, nullptr, false)},
                          {"params", nlohmann::json::parse(r->params_json, nullptr, false)},
                          {"summary", nlohmann::json::parse(r->summary_json, nullptr, false)}};
      if (auto m = store->model(r->model_id)) j["model"] = {{"path", m->path}, {"sha256", m->sha256}, {"name", m->name}};
      nlohmann::json samples = nlohmann::json::array();
      for (const auto& s : store->samples(r->id))
        samples.push_back({{"rep", s.rep}, {"side", s.side}, {"warm", s.warm}, {"decode_tok_s", s.decode_tok_s},
                           {"prefill_tok_s", s.prefill_tok_s}, {"ttft_ms", s.ttft_ms}, {"effective_gbs", s.effective_gbs},
                           {"bandwidth_share", s.bandwidth_share}, {"peak_device_bytes", s.peak_device_bytes}});
      j["samples"] = samples;
      j["timeline_ops"] = store->timeline_ops(r->id).size();
      if (auto cmp = store->comparison_for_run(r->id))
        j["verdict"] = {{"verdict", std::string(to_string(cmp->verdict))}, {"reason", cmp->reason},
                        {"ratio_median", cmp->ratio_median}, {"switch", cmp->switch_name}};
      std::cout << json_text(j, 2) << "\n";
      return;
    }
    RunFilter f;
    f.model = a->model;
    if (!a->kind.empty()) f.kind = run_kind_from_string(a->kind);
    std::printf("%5s  %-12s %-7s %-8s %-26s %10s  %-20s %s\n", "id", "kind", "status", "backend", "device", "tok/s",
                "started", "label / config");
    for (const auto& r : store->runs(f)) {
      const auto summary = nlohmann::json::parse(r.summary_json, nullptr, false);
      const bool busy = summary.is_object() && summary.value("busy", false);  // decode-proxy and A/B runs say
      const std::optional<int> depth = stored_depth(r.params_json);
      std::printf("%5lld  %-12s %-7s %-8s %-26.26s %10.2f  %-20s %s%s%s%s\n", static_cast<long long>(r.id),
                  std::string(to_string(r.kind)).c_str(), std::string(to_string(r.status)).c_str(), r.backend.c_str(),
                  r.device.c_str(), median_tok_s(*store, r.id), r.started_at.c_str(),
                  r.label.empty() ? r.config.c_str() : r.label.c_str(),
                  depth ? (" (depth " + std::to_string(*depth) + ")").c_str() : "", r.imported ? " (imported)" : "",
                  busy ? " (busy)" : "");
    }
  });
});

}  // namespace
}  // namespace p64::cli
