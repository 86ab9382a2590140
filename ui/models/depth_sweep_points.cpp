#include "ui/models/depth_sweep_points.h"

#include <QObject>
#include <QStringList>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/lab/depth_sweep.h"
#include "ui/models/store_snapshot.h"

namespace p64::ui {
namespace {

double median_of(const nlohmann::json& summary, const char* key, const char* field = "median") {
  if (!summary.is_object() || !summary.contains(key) || !summary[key].is_object()) return 0;
  const auto& v = summary[key];
  return v.contains(field) && v[field].is_number() ? v[field].get<double>() : 0;
}

// What ties a run to its sweep: the list, the sweep's start, the model and the configuration.
struct SweepKey {
  nlohmann::json depths;
  nlohmann::json started_at;
  int64_t model_id = 0;
  std::string config;
  bool operator==(const SweepKey&) const = default;
};

bool sweep_key(const RunRecord& run, SweepKey* key, int* depth) {
  if (run.kind != RunKind::DecodeProxy) return false;
  const std::optional<int> d = stored_depth(run.params_json);
  if (!d) return false;
  const auto p = nlohmann::json::parse(run.params_json);
  *depth = *d;
  *key = {p.value("depth_sweep", nlohmann::json()), p.value("sweep_started_at", nlohmann::json()), run.model_id,
          run.config};
  return true;
}

}  // namespace

DepthSweepPoint depth_sweep_point(int depth, qint64 run_id, const nlohmann::json& summary) {
  DepthSweepPoint p;
  p.depth = depth;
  p.run_id = run_id;
  p.tok_s = median_of(summary, "decode_tok_s");
  p.tok_s_stddev = median_of(summary, "decode_tok_s", "stddev");
  p.effective_gbs = median_of(summary, "effective_gbs");
  if (summary.is_object()) {
    p.bytes_per_token = summary.value("bytes_per_token", 0.0);
    p.measured_read_gbs = summary.value("measured_read_gbs", 0.0);
  }
  return p;
}

std::vector<DepthSweepPoint> stored_sweep_points(const std::vector<RunRow>& rows, const RunRecord& run) {
  SweepKey key;
  int depth = 0;
  if (!sweep_key(run, &key, &depth)) return {};
  std::vector<DepthSweepPoint> points;
  for (const RunRow& row : rows) {
    SweepKey other;
    if (!sweep_key(row.run, &other, &depth) || !(other == key)) continue;
    points.push_back(depth_sweep_point(depth, row.run.id, nlohmann::json::parse(row.run.summary_json, nullptr, false)));
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.depth < b.depth; });
  return points;
}

QString describe_sweep(const std::vector<DepthSweepPoint>& points) {
  QStringList parts;
  for (const DepthSweepPoint& p : points)
    parts << QObject::tr("%1 ± %2 tok/s, %3 GB/s at depth %4")
                 .arg(p.tok_s, 0, 'f', 2)
                 .arg(p.tok_s_stddev, 0, 'f', 2)
                 .arg(p.effective_gbs, 0, 'f', 3)
                 .arg(p.depth);
  return parts.join("; ");
}

}  // namespace p64::ui
