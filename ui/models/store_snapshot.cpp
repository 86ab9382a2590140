#include "ui/models/store_snapshot.h"

#include <QFileInfo>
#include <QSet>

#include <nlohmann/json.hpp>

#include "engine/lab/depth_sweep.h"
#include "engine/lab/store.h"

namespace p64::ui {

void summary_decode_figures(const std::string& summary_json, double* median, double* min, double* max) {
  *median = *min = *max = 0;
  if (summary_json.empty()) return;
  const auto j = nlohmann::json::parse(summary_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("decode_tok_s") || !j["decode_tok_s"].is_object()) return;
  const auto& d = j["decode_tok_s"];
  *median = d.value("median", 0.0);
  *min = d.value("min", *median);
  *max = d.value("max", *median);
}

std::vector<RunRow> load_run_rows(const Store& store) {
  QMap<int64_t, QString> names;
  for (const ModelRecord& m : store.models())
    names.insert(m.id, !m.name.empty() ? QString::fromStdString(m.name) : QFileInfo(QString::fromStdString(m.path)).fileName());
  std::vector<RunRow> rows;
  for (RunRecord& r : store.runs()) {
    RunRow row;
    row.model_name = names.value(r.model_id);
    summary_decode_figures(r.summary_json, &row.decode_median, &row.decode_min, &row.decode_max);
    row.depth = stored_depth(r.params_json);
    row.run = std::move(r);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<OptimisationRow> load_optimisation_rows(const Store& store) {
  // Devices the imported history was measured on: the devices of the imported runs.
  QSet<QString> imported_devices;
  RunFilter imported;
  imported.include_imported = true;
  for (const RunRecord& r : store.runs(imported))
    if (r.imported && !r.device.empty()) imported_devices.insert(QString::fromStdString(r.device));

  std::vector<OptimisationRow> rows;
  for (OptimisationRecord& o : store.optimisations()) {
    OptimisationRow row;
    row.history = store.optimisation_history(o.id);
    row.comparisons = store.comparisons(o.name);
    QSet<QString> devices;
    for (const auto& c : row.comparisons)
      if (c.backend == o.backend && !c.device.empty()) devices.insert(QString::fromStdString(c.device));
    bool any_imported = o.imported;
    for (const auto& h : row.history) any_imported = any_imported || h.imported;
    if (any_imported) devices.unite(imported_devices);
    row.devices = QStringList(devices.begin(), devices.end());
    row.devices.sort();
    row.opt = std::move(o);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace p64::ui
