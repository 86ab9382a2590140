#include "engine/lab/report.h"

#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine/lab/depth_sweep.h"
#include "engine/lab/plan_history.h"
#include "engine/lab/report_scope.h"
#include "engine/lab/run_gpu_figures.h"
#include "engine/lab/stats.h"
#include "engine/lab/store.h"
#include "engine/lab/text_escape.h"

namespace p64 {
namespace {

std::string fmt(double v, int prec = 2) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

// A string field of the report as Markdown text (the store's text is not ours to trust).
std::string md(const nlohmann::json& v) { return markdown_text(v.get<std::string>()); }

}  // namespace

namespace {

// A decode-proxy run as a scoreboard row; null when it has no measured sample.
nlohmann::json run_row(const Store& store, const RunRecord& r, const std::optional<ModelRecord>& model) {
  using nlohmann::json;
  std::vector<double> v;
  for (const auto& s : store.samples(r.id))
    if (!s.warm) v.push_back(s.decode_tok_s);
  const MinMedianMax m = min_median_max(v);
  if (m.n == 0) return json();
  json row = {{"run_id", r.id},
              {"stage", r.label.empty() ? r.config + " @ " + r.started_at : r.label},
              {"model", model ? model->name : ""},
              {"model_id", r.model_id},
              {"backend", r.backend},
              {"device", r.device},
              {"tok_s", m.median},
              {"min", m.min},
              {"max", m.max},
              {"stddev", m.stddev},
              {"cv", m.cv},
              {"imported", r.imported}};
  // A depth sweep stores one run per depth under one label: the depth tells its rows apart.
  if (const std::optional<int> depth = stored_depth(r.params_json)) {
    row["depth"] = *depth;
    row["stage"] = row["stage"].get<std::string>() + " (depth " + std::to_string(*depth) + ")";
  }
  const json summary = json::parse(r.summary_json, nullptr, false);
  if (summary.is_object() && summary.contains("bandwidth_share"))
    row["bandwidth_share"] = summary["bandwidth_share"].value("median", 0.0);
  if (summary.is_object() && summary.contains("effective_gbs"))
    row["effective_gbs"] = summary["effective_gbs"].value("median", 0.0);
  if (summary.is_object()) row["measured_read_gbs"] = summary.value("measured_read_gbs", 0.0);
  if (summary.is_object() && summary.contains("busy")) row["busy"] = summary.value("busy", false);
  // Absent, not zero, where the run has no such figure: the page shows "—" for it.
  const RunGpuFigures gpu = run_gpu_figures(summary);
  if (gpu.tok_per_j) row["tok_per_j"] = *gpu.tok_per_j;
  if (gpu.power_w_mean) row["power_w_mean"] = *gpu.power_w_mean;
  if (gpu.throttled) row["throttled"] = *gpu.throttled;
  return row;
}

nlohmann::json peer_row(const PeerResult& p) {
  return {{"tool", p.tool}, {"model", p.model},   {"quant", p.quant},    {"test", p.test},
          {"device", p.device}, {"tok_s", p.avg_ts}, {"stddev", p.stddev_ts}};
}

// "Delta vs first": against the first run on the same model and device (and, for a depth sweep's
// run, at the same depth: a deeper context is slower by design, not a regression).
void add_deltas(nlohmann::json& rows) {
  std::map<std::tuple<int64_t, std::string, int>, double> first;
  for (auto& row : rows) {
    double& f = first[{row["model_id"].get<int64_t>(), row["device"].get<std::string>(), row.value("depth", -1)}];
    row["first_on_model_device"] = f == 0;
    if (f == 0) f = row["tok_s"].get<double>();
    row["delta_vs_first"] = f > 0 ? row["tok_s"].get<double>() / f - 1 : 0.0;
  }
}

}  // namespace

nlohmann::json build_report(const Store& store, const ReportOptions& opt) {
  using nlohmann::json;
  json rep = {{"generated_at", utc_now_iso()}, {"model_filter", opt.model}};
  RunFilter f;
  f.model = opt.model;
  f.kind = RunKind::DecodeProxy;
  json rows = json::array(), plan_rows = json::array();
  std::map<int64_t, std::optional<ModelRecord>> models;
  auto model_of = [&](int64_t id) -> const std::optional<ModelRecord>& {
    auto it = models.find(id);
    if (it == models.end()) it = models.emplace(id, store.model(id)).first;
    return it->second;
  };
  json latest;
  for (const auto& r : store.runs(f)) {
    json row = run_row(store, r, model_of(r.model_id));
    if (row.is_null()) continue;
    (r.imported ? plan_rows : rows).push_back(row);
    if (!r.imported) latest = row;
  }
  add_deltas(rows);
  add_deltas(plan_rows);
  rep["scoreboard"] = rows;

  // A peer's ratio is to the user's latest run on the peer's model and device, or none.
  json peers = json::array(), plan_peers = json::array();
  for (const auto& p : store.peer_results(PeerFilter{})) {
    if (p.n_gen == 0 && p.test != "tg") continue;  // decode diagnostics only
    json row = peer_row(p);
    if (p.source_file == kPlanHistorySource) {
      // The plan's peer ran beside the plan's runs (its one model, on its host).
      if (!plan_rows.empty() && same_device(p.device, plan_rows.back()["device"].get<std::string>()))
        row["ratio_peer_over_ours"] = p.avg_ts / plan_rows.back()["tok_s"].get<double>();
      plan_peers.push_back(row);
      continue;
    }
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
      const auto& model = model_of((*it)["model_id"].get<int64_t>());
      if (model && same_model(p, *model) && same_device(p.device, (*it)["device"].get<std::string>())) {
        row["ratio_peer_over_ours"] = p.avg_ts / (*it)["tok_s"].get<double>();
        row["ratio_vs_run"] = (*it)["run_id"];
        break;
      }
    }
    peers.push_back(row);
  }
  rep["peer_diagnostics"] = peers;

  // The bars, on the latest run: the plan's only on the plan's model, the user's on any.
  const std::optional<ModelRecord> latest_model =
      latest.is_null() ? std::nullopt : model_of(latest["model_id"].get<int64_t>());
  const bool applies = !latest.is_null() && (opt.bars_from_user || (latest_model && is_plan_bars_model(*latest_model)));
  const double tok = latest.is_null() ? 0.0 : latest["tok_s"].get<double>();
  const double share = latest.is_null() ? 0.0 : latest.value("bandwidth_share", 0.0);
  auto bar = [&](const char* id, const std::string& metric, double value, double threshold, bool pass) {
    return json{{"bar", id},           {"metric", metric},         {"value", value},
                {"threshold", threshold}, {"pass", applies && pass}, {"applies", applies}};
  };
  const BarThresholds& b = opt.bars;
  rep["bars"] = json::array({bar("G0", "a stored run decodes (tok/s > 0)", tok, 0, tok > 0),
                             bar("G1", "decode tok/s", tok, b.g1_tok_s, tok >= b.g1_tok_s),
                             bar("G2", "decode tok/s", tok, b.g2_tok_s, tok >= b.g2_tok_s),
                             bar("G3", "decode tok/s", tok, b.g3_tok_s, tok >= b.g3_tok_s),
                             bar("G4", "decode tok/s", tok, b.g4_tok_s, tok > b.g4_tok_s),
                             bar("G5", "effective GB/s share of measured read", share, b.g5_bandwidth_share,
                                 share >= b.g5_bandwidth_share)});
  rep["bars_evaluated_on_run"] = latest.is_null() ? json() : latest["run_id"];
  rep["bars_source"] = opt.bars_from_user ? "user" : "plan";
  rep["bars_apply"] = applies;
  // The bars are per model and device: say which ones they were judged on, or why not at all.
  if (!latest.is_null())
    rep["bars_evaluated_on"] = {{"model", latest["model"]}, {"backend", latest["backend"]}, {"device", latest["device"]}};
  rep["bars_note"] =
      latest.is_null() ? "no run of yours stored yet"
      : applies        ? (opt.bars_from_user ? std::string("bars given on the command line")
                                             : "the plan's bars for " + std::string(kPlanBarsModel))
                       : "the plan's bars are set for " + std::string(kPlanBarsModel) + ", and run " +
                      std::to_string(latest["run_id"].get<int64_t>()) + " is on " + latest["model"].get<std::string>() +
                      "; give --g1..--g5 to set bars for this model";

  json split = json::object();
  int64_t model_id = 0;
  if (!opt.model.empty())
    if (auto m = store.find_model(opt.model)) model_id = m->id;
  if (auto tl = store.latest_run_id(RunKind::Timeline, model_id)) {
    const auto r = store.run(*tl);
    const json s = json::parse(r->summary_json, nullptr, false);
    split = {{"run_id", *tl}, {"groups", s.value("groups", json::array())}, {"ops", s.value("ops", json::array())},
             {"dispatches_per_layer", s.value("dispatches_per_layer", 0.0)}, {"coverage", s.value("coverage", 0.0)}};
  }
  rep["timeline"] = split;
  rep["roofline"] = latest.is_null() ? json::object()
                                     : json{{"run_id", latest["run_id"]},
                                            {"effective_gbs", latest.value("effective_gbs", 0.0)},
                                            {"measured_read_gbs", latest.value("measured_read_gbs", 0.0)},
                                            {"share", share},
                                            {"tok_s", tok}};
  json rejected = json::array(), plan_rejected = json::array();
  OptimisationFilter of;
  of.status = OptStatus::Rejected;
  for (const auto& o : store.optimisations(of)) {
    const auto hist = store.optimisation_history(o.id);
    (o.imported ? plan_rejected : rejected)
        .push_back({{"name", o.name}, {"backend", o.backend}, {"description", o.description},
                    {"imported", o.imported}, {"reason", hist.empty() ? "" : hist.back().reason},
                    {"evidence", hist.empty() ? "" : hist.back().evidence}});
  }
  rep["rejected_optimisations"] = rejected;
  rep["plan_history"] = {{"label", kPlanHistoryLabel},
                         {"source", kPlanHistorySource},
                         {"imported", store.meta(kPlanHistoryMetaKey).has_value()},
                         {"scoreboard", plan_rows},
                         {"peer_diagnostics", plan_peers},
                         {"rejected_optimisations", plan_rejected}};
  return rep;
}

namespace {

// The scoreboard table: runs, then the peers measured beside them.
void scoreboard_table(std::ostringstream& o, const nlohmann::json& rows, const nlohmann::json& peers) {
  o << "| Stage | Model | tok/s | min-max | ± stddev (CV) | Delta vs start | Backend | Device |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const auto& row : rows) {
    const double delta = row["delta_vs_first"].get<double>();
    o << "| " << md(row["stage"]) << (row.value("busy", false) ? " (busy)" : "") << " | "
      << md(row["model"]) << " | " << fmt(row["tok_s"]) << " | " << fmt(row["min"]) << "-"
      << fmt(row["max"]) << " | ± " << fmt(row.value("stddev", 0.0)) << " (" << fmt(100 * row.value("cv", 0.0), 1)
      << "%) | ";
    if (row.value("first_on_model_device", false)) o << "—";
    else o << (delta >= 0 ? "+" : "") << fmt(100 * delta, 0) << "%";
    o << " | " << md(row["backend"]) << " | " << md(row["device"]) << " |\n";
  }
  for (const auto& p : peers)
    o << "| " << md(p["tool"]) << " diagnostic (" << md(p["test"]) << ") | "
      << md(p["model"]) << ", " << md(p["quant"]) << " | " << fmt(p["tok_s"])
      << " | — | ± " << fmt(p["stddev"]) << " | "
      << (p.contains("ratio_peer_over_ours")
              ? fmt(p["ratio_peer_over_ours"].get<double>(), 1) + "x " +
                    (p.contains("ratio_vs_run") ? "run " + std::to_string(p["ratio_vs_run"].get<int64_t>())
                                                : std::string("the last stage"))
              : std::string("no run on this model and device"))
      << " | peer | " << md(p["device"]) << " |\n";
}

void rejected_table(std::ostringstream& o, const nlohmann::json& rows) {
  o << "| Switch | Backend | Reason | Evidence |\n|---|---|---|---|\n";
  for (const auto& x : rows)
    o << "| " << md(x["name"]) << " | " << md(x["backend"]) << " | "
      << md(x["reason"]) << " | " << md(x["evidence"]) << " |\n";
}

}  // namespace

std::string render_markdown(const nlohmann::json& r) {
  std::ostringstream o;
  o << "# P64 Lab report\n\nGenerated " << r.value("generated_at", "") << "\n\n## Scoreboard (your runs)\n\n";
  if (r["scoreboard"].empty()) o << "No decode-proxy run of yours in this store yet.\n\n";
  scoreboard_table(o, r["scoreboard"], r["peer_diagnostics"]);
  o << "\n## Bars\n\n";
  const bool apply = r.value("bars_apply", false);
  if (r.contains("bars_evaluated_on") && apply)
    o << "Judged on run " << r["bars_evaluated_on_run"].get<int64_t>() << ": "
      << md(r["bars_evaluated_on"]["model"]) << ", " << md(r["bars_evaluated_on"]["backend"]) << " on "
      << md(r["bars_evaluated_on"]["device"]) << " (" << markdown_text(r.value("bars_note", ""))
      << "; use --model to judge another model).\n\n";
  else
    o << "Not judged: " << markdown_text(r.value("bars_note", "")) << ".\n\n";
  o << "| Bar | Metric | Value | Threshold | Status |\n|---|---|---|---|---|\n";
  for (const auto& b : r["bars"])
    o << "| " << b["bar"].get<std::string>() << " | " << b["metric"].get<std::string>() << " | " << fmt(b["value"], 3)
      << " | " << fmt(b["threshold"], 2) << " | "
      << (!b.value("applies", true) ? "n/a" : b["pass"].get<bool>() ? "✅" : "❌") << " |\n";
  o << "\n## Timeline split (latest timeline run)\n\n";
  if (r["timeline"].contains("groups")) {
    o << "| Group | ms/step | Share |\n|---|---|---|\n";
    for (const auto& g : r["timeline"]["groups"])
      o << "| " << md(g["group"]) << " | " << fmt(g["ms"], 4) << " | " << fmt(100 * g["share"].get<double>(), 1) << "% |\n";
  } else {
    o << "No timeline run stored.\n";
  }
  o << "\n## Roofline\n\n";
  if (r["roofline"].contains("tok_s"))
    o << "Run " << r["roofline"]["run_id"] << ": " << fmt(r["roofline"]["tok_s"]) << " tok/s, effective "
      << fmt(r["roofline"]["effective_gbs"], 3) << " GB/s of measured read " << fmt(r["roofline"]["measured_read_gbs"], 1)
      << " GB/s (" << fmt(100 * r["roofline"]["share"].get<double>(), 1) << "%)\n";
  o << "\n## Rejected optimisations\n\n";
  rejected_table(o, r["rejected_optimisations"]);
  if (r.contains("plan_history")) {
    const auto& h = r["plan_history"];
    o << "\n## " << h["label"].get<std::string>() << "\n\n";
    if (!h.value("imported", false)) {
      o << "Not imported into this store.\n";
    } else {
      o << "From " << md(h["source"])
        << ": the plan's own runs of its model on its host. They are not your runs: the scoreboard, the bars and "
           "the peer ratios above never use them.\n\n";
      scoreboard_table(o, h["scoreboard"], h["peer_diagnostics"]);
      o << "\nRejected as default in the plan:\n\n";
      rejected_table(o, h["rejected_optimisations"]);
    }
  }
  return o.str();
}

std::string render_csv(const nlohmann::json& r) {
  std::ostringstream o;
  o << "kind,stage,tok_s,min,max,delta_vs_first,backend,device,stddev,cv\n";
  auto q = [](const nlohmann::json& v) { return csv_cell(v.get<std::string>()); };
  for (const auto& row : r["scoreboard"])
    o << "run," << q(row["stage"]) << "," << row["tok_s"] << "," << row["min"] << "," << row["max"] << ","
      << row["delta_vs_first"] << "," << q(row["backend"]) << "," << q(row["device"]) << ","
      << row.value("stddev", 0.0) << "," << row.value("cv", 0.0) << "\n";
  for (const auto& p : r["peer_diagnostics"])
    o << "peer," << csv_cell(p["tool"].get<std::string>() + " " + p["test"].get<std::string>()) << "," << p["tok_s"] << ",,,,"
      << q(p["quant"]) << "," << q(p["device"]) << "," << p["stddev"] << ",\n";
  return o.str();
}

std::string render_html(const nlohmann::json& r) {
  std::ostringstream o;
  o << "<!doctype html><html><head><meta charset=\"utf-8\"><title>P64 Lab report</title><style>body{font-family:sans-serif;"
       "margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style></head><body>";
  o << "<h1>P64 Lab report</h1><p>Generated " << html_escape(r.value("generated_at", "")) << "</p><h2>Scoreboard</h2>";
  // Bar chart of tok/s per stage with a min-max whisker.
  const auto& rows = r["scoreboard"];
  double top = 1;
  for (const auto& row : rows) top = std::max(top, row["max"].get<double>());
  const int bar_h = 22, w = 640;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w + 260 << "\" height=\"" << bar_h * rows.size() + 10 << "\">";
  int y = 5;
  for (const auto& row : rows) {
    const double x = row["tok_s"].get<double>() / top * w, x0 = row["min"].get<double>() / top * w,
                 x1 = row["max"].get<double>() / top * w;
    o << "<rect x=\"250\" y=\"" << y << "\" width=\"" << x << "\" height=\"" << bar_h - 6 << "\" fill=\"#4a7\"/>"
      << "<line x1=\"" << 250 + x0 << "\" x2=\"" << 250 + x1 << "\" y1=\"" << y + 8 << "\" y2=\"" << y + 8
      << "\" stroke=\"#000\"/><text x=\"0\" y=\"" << y + 12 << "\" font-size=\"11\">"
      << html_escape(row["stage"].get<std::string>().substr(0, 40)) << "</text><text x=\"" << 254 + x1 << "\" y=\""
      << y + 12 << "\" font-size=\"11\">" << fmt(row["tok_s"]) << "</text>";
    y += bar_h;
  }
  o << "</svg>";
  // The Markdown tables, re-rendered as HTML rows.
  std::istringstream md(render_markdown(r));
  std::string line;
  bool in_table = false;
  while (std::getline(md, line)) {
    if (line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| ", 0) == 0) {
      if (!in_table) o << "<table>";
      in_table = true;
      o << "<tr>";
      for (const std::string& cell : markdown_row_cells(line)) o << "<td>" << html_escape(cell) << "</td>";
      o << "</tr>";
      continue;
    }
    if (in_table) o << "</table>";
    in_table = false;
    if (line.rfind("## ", 0) == 0) o << "<h2>" << html_escape(line.substr(3)) << "</h2>";
    else if (!line.empty() && line[0] != '#') o << "<p>" << html_escape(markdown_plain(line)) << "</p>";
  }
  if (in_table) o << "</table>";
  // Timeline split as one stacked bar.
  if (r["timeline"].contains("groups")) {
    o << "<h2>Timeline split chart</h2><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"660\" height=\"40\">";
    const char* colours[] = {"#e66", "#69c", "#6b6", "#c9c", "#fc6", "#aaa"};
    double x = 0;
    int i = 0;
    for (const auto& g : r["timeline"]["groups"]) {
      const double wpx = g["share"].get<double>() * 640;
      o << "<rect x=\"" << x << "\" y=\"5\" width=\"" << wpx << "\" height=\"30\" fill=\"" << colours[i++ % 6]
        << "\"><title>" << html_escape(g["group"].get<std::string>()) << " " << fmt(100 * g["share"].get<double>(), 1)
        << "%</title></rect>";
      x += wpx;
    }
    o << "</svg>";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace p64
