#include "ui/models/json_table_model.h"

#include <QBrush>
#include <QColor>

#include <optional>

#include "ui/models/gpu_energy_rows.h"

namespace p64::ui {

void JsonTableModel::set_rows(const nlohmann::json& array) {
  beginResetModel();
  rows_ = array.is_array() ? array : nlohmann::json::array();
  endResetModel();
}

QVariant JsonTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columns_.size()) return {};
  return columns_[index.column()].cell(rows_[static_cast<size_t>(index.row())], role);
}

QVariant JsonTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole || section >= columns_.size()) return {};
  return columns_[section].header;
}

namespace {
using json = nlohmann::json;
using Cell = std::function<QVariant(const json&, int)>;

QString str(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return {};
  return it->is_string() ? QString::fromStdString(it->get<std::string>()) : QString::fromStdString(it->dump());
}

Cell text(const char* key) {
  return [key](const json& row, int role) -> QVariant {
    return role == Qt::DisplayRole || role == Qt::ToolTipRole ? QVariant(str(row, key)) : QVariant();
  };
}

// A number right-aligned; "—" when the row has no such figure.
Cell number(const char* key, int precision, double scale = 1, const char* suffix = "") {
  return [=](const json& row, int role) -> QVariant {
    if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    const auto it = row.find(key);
    if (it == row.end() || !it->is_number()) return QString("—");
    return QString::number(scale * it->get<double>(), 'f', precision) + suffix;
  };
}

QColor pass_color(bool pass) { return pass ? QColor(0x2e, 0x9d, 0x4a) : QColor(0xd0, 0x3a, 0x3a); }
}  // namespace

JsonTableModel* make_scoreboard_model(QObject* parent) {
  QVector<JsonTableModel::Column> c{
      {QObject::tr("Run"), number("run_id", 0)},
      {QObject::tr("Stage"), text("stage")},
      {QObject::tr("Model"), text("model")},
      {QObject::tr("Backend"), text("backend")},
      {QObject::tr("Device"), text("device")},
      {QObject::tr("tok/s"), number("tok_s", 2)},
      {QObject::tr("min–max"),
       [](const json& row, int role) -> QVariant {
         if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
         if (role != Qt::DisplayRole) return {};
         return QString("%1–%2").arg(row.value("min", 0.0), 0, 'f', 2).arg(row.value("max", 0.0), 0, 'f', 2);
       }},
      {QObject::tr("Δ vs first"),
       [](const json& row, int role) -> QVariant {
         if (role == Qt::TextAlignmentRole) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
         if (role != Qt::DisplayRole) return {};
         const double d = 100 * row.value("delta_vs_first", 0.0);
         return QString("%1%2%").arg(d >= 0 ? "+" : "").arg(d, 0, 'f', 1);
       }},
      {QObject::tr("eff. GB/s"), number("effective_gbs", 3)},
      {QObject::tr("share of BW"), number("bandwidth_share", 1, 100, "%")},
      // NVML's figures of a CUDA run (run_gpu_figures.h); "—" where the run has none.
      {QObject::tr("tok/J"), number("tok_per_j", 3)},
      {QObject::tr("power"), number("power_w_mean", 0, 1, " W")},
      {QObject::tr("throttled"),
       [](const json& row, int role) -> QVariant {
         const auto it = row.find("throttled");
         const std::optional<bool> t = it != row.end() && it->is_boolean() ? std::optional<bool>(it->get<bool>()) : std::nullopt;
         if (role == Qt::DisplayRole) return throttled_text(t);
         if (role == Qt::ForegroundRole && t && *t) return QBrush(pass_color(false));
         if (role == Qt::ToolTipRole && t)
           return *t ? QObject::tr("A clocks-event reason slowed the GPU during the run: its tok/s is not the card's best")
                     : QObject::tr("No clocks-event reason slowed the GPU in any sample");
         return {};
       }},
      {QObject::tr("Imported"),
       [](const json& row, int role) -> QVariant {
         return role == Qt::DisplayRole ? QVariant(row.value("imported", false) ? QObject::tr("plan") : QString())
                                        : QVariant();
       }},
  };
  return new JsonTableModel(std::move(c), parent);
}

JsonTableModel* make_bars_model(QObject* parent) {
  QVector<JsonTableModel::Column> c{
      {QObject::tr("Bar"), text("bar")},
      {QObject::tr("Metric"), text("metric")},
      {QObject::tr("Value"), number("value", 3)},
      {QObject::tr("Threshold"), number("threshold", 2)},
      {QObject::tr("Status"),
       [](const json& row, int role) -> QVariant {
         // A bar set for another model (the plan's 3B) says nothing about this one.
         if (!row.value("applies", true)) return role == Qt::DisplayRole ? QVariant(QObject::tr("n/a")) : QVariant();
         const bool pass = row.value("pass", false);
         if (role == Qt::DisplayRole) return pass ? QObject::tr("PASS") : QObject::tr("not met");
         if (role == Qt::ForegroundRole) return QBrush(pass_color(pass));
         return {};
       }},
  };
  return new JsonTableModel(std::move(c), parent);
}

JsonTableModel* make_peers_model(QObject* parent) {
  QVector<JsonTableModel::Column> c{
      {QObject::tr("Tool"), text("tool")},       {QObject::tr("Model"), text("model")},
      {QObject::tr("Quant"), text("quant")},     {QObject::tr("Test"), text("test")},
      {QObject::tr("Device"), text("device")},   {QObject::tr("tok/s"), number("tok_s", 2)},
      {QObject::tr("±"), number("stddev", 2)},   {QObject::tr("peer / ours"), number("ratio_peer_over_ours", 2, 1, "×")},
  };
  return new JsonTableModel(std::move(c), parent);
}

}  // namespace p64::ui
