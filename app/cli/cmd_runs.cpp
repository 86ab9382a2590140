// p64 runs: list stored runs; `p64 runs show ID` for one run's details.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/error.h"
#include "engine/lab/depth_sweep.h"
#include "engine/lab/stats.h"
#include "engine/lab/store.h"
#include "engine/lab/store_text.h"

namespace p64::cli {
namespace {

struct Args {
  std::string db = default_store_path();
  std::string model, kind;
  int64_t id = 0;
  bool json = false;
};

double median_tok_s(const Store& s, int64_t run_id) {
  std::vector<double> v;
  for (const auto& x : s.samples(run_id)) v.push_back(x.decode_tok_s);
  return min_median_max(v).median;
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
  c->callback([a, show] {
    auto store = Store::open(a->db);
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
