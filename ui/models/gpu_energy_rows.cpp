#include "ui/models/gpu_energy_rows.h"

#include <QCoreApplication>
#include <QStringList>

#include <nlohmann/json.hpp>

namespace p64::ui {

namespace {

QString tr(const char* s) { return QCoreApplication::translate("GpuEnergyRows", s); }

bool has_number(const nlohmann::json& j, const char* key) { return j.contains(key) && j[key].is_number(); }
double number(const nlohmann::json& j, const char* key) { return j[key].get<double>(); }

// "1755–1980 MHz", "2619 MHz"; empty when the figure is unknown (null).
QString range(const nlohmann::json& j, const char* lo, const char* hi, const char* unit) {
  if (!has_number(j, hi)) return {};
  const double a = has_number(j, lo) ? number(j, lo) : number(j, hi), b = number(j, hi);
  if (a == b) return QString("%1 %2").arg(b, 0, 'f', 0).arg(unit);
  return QString("%1–%2 %3").arg(a, 0, 'f', 0).arg(b, 0, 'f', 0).arg(unit);
}

void add_gpu(const nlohmann::json& gpu, QVector<KeyValueModel::Row>* rows) {
  if (!gpu.value("available", false)) {
    *rows << KeyValueModel::Row{tr("GPU figures"),
                                tr("none: %1").arg(QString::fromStdString(gpu.value("unavailable", std::string("not recorded"))))};
    return;
  }
  *rows << KeyValueModel::Row{tr("GPU read"), QString::fromStdString(gpu.value("device", std::string()))};
  const int samples = gpu.value("samples", 0), idle = gpu.value("idle_samples", 0);
  *rows << KeyValueModel::Row{tr("GPU samples"), idle > 0 ? tr("%1 (%2 found it idle)").arg(samples).arg(idle)
                                                          : QString::number(samples)};
  const QString sm = range(gpu, "sm_mhz_min", "sm_mhz_max", "MHz");
  const QString mem = range(gpu, "mem_mhz_min", "mem_mhz_max", "MHz");
  *rows << KeyValueModel::Row{tr("SM clock"), sm.isEmpty() ? tr("unknown") : sm};
  *rows << KeyValueModel::Row{tr("memory clock"), mem.isEmpty() ? tr("unknown") : mem};
  *rows << KeyValueModel::Row{tr("board power"), has_number(gpu, "power_w_mean")
                                                     ? tr("%1 W mean, %2 W max")
                                                           .arg(number(gpu, "power_w_mean"), 0, 'f', 0)
                                                           .arg(has_number(gpu, "power_w_max") ? number(gpu, "power_w_max") : 0.0, 0, 'f', 0)
                                                     : tr("unknown")};
  QString throttled = tr("unknown (no clocks-event reasons)");
  if (gpu.contains("throttled") && gpu["throttled"].is_boolean()) {
    QStringList reasons;
    for (const auto& r : gpu.value("throttle_reasons", nlohmann::json::array()))
      if (r.is_string()) reasons << QString::fromStdString(r.get<std::string>());
    throttled = gpu["throttled"].get<bool>() ? tr("THROTTLED: %1").arg(reasons.join(", ")) : tr("no");
  }
  *rows << KeyValueModel::Row{tr("throttled"), throttled};
}

void add_energy(const nlohmann::json& energy, const QString& side, QVector<KeyValueModel::Row>* rows) {
  const QString prefix = side.isEmpty() ? QString() : side + " ";
  const auto& t = energy.value("tok_per_j", nlohmann::json::object());
  const int n = t.is_object() ? t.value("n", 0) : 0;
  *rows << KeyValueModel::Row{prefix + tr("tok/J"),
                              n > 0 ? tr("%1 median (%2–%3), %4 runs")
                                          .arg(t.value("median", 0.0), 0, 'f', 3)
                                          .arg(t.value("min", 0.0), 0, 'f', 3)
                                          .arg(t.value("max", 0.0), 0, 'f', 3)
                                          .arg(n)
                                    : tr("unknown (no energy read)")};
  *rows << KeyValueModel::Row{prefix + tr("energy source"), QString::fromStdString(energy.value("source", std::string()))};
}

}  // namespace

QString throttled_text(const std::optional<bool>& throttled) {
  if (!throttled) return QStringLiteral("—");
  return *throttled ? tr("THROTTLED") : tr("not throttled");
}

QString gpu_figures_text(const RunGpuFigures& f) {
  const QString dash = QStringLiteral("—");
  return tr("tok/J %1 · power %2 · %3")
      .arg(f.tok_per_j ? QString::number(*f.tok_per_j, 'f', 3) : dash,
           f.power_w_mean ? tr("%1 W").arg(*f.power_w_mean, 0, 'f', 0) : dash,
           f.throttled ? throttled_text(f.throttled) : tr("throttled —"));
}

QVector<KeyValueModel::Row> gpu_energy_rows(const nlohmann::json& summary) {
  QVector<KeyValueModel::Row> rows;
  if (!summary.is_object()) return rows;
  const auto& machine = summary.value("machine", nlohmann::json::object());
  if (machine.is_object() && machine.contains("gpu") && machine["gpu"].is_object()) add_gpu(machine["gpu"], &rows);
  auto add_energy_of = [&rows](const nlohmann::json& owner, const QString& side) {
    if (owner.contains("energy") && owner["energy"].is_object()) add_energy(owner["energy"], side, &rows);
    if (owner.contains("energy_unavailable") && owner["energy_unavailable"].is_string())
      rows << KeyValueModel::Row{(side.isEmpty() ? QString() : side + " ") + tr("CPU energy"),
                                 tr("none: %1").arg(QString::fromStdString(owner["energy_unavailable"].get<std::string>()))};
  };
  add_energy_of(summary, {});
  for (const char* side : {"a", "b"})
    if (summary.contains(side) && summary[side].is_object()) add_energy_of(summary[side], QString(side).toUpper());
  if (rows.isEmpty())
    rows << KeyValueModel::Row{tr("GPU figures"),
                               tr("none: NVML figures are recorded for CUDA runs, RAPL energy for CPU runs")};
  return rows;
}

}  // namespace p64::ui
