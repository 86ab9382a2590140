#include "ui/models/roofline_model.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace p64::ui {

std::optional<RooflinePoint> roofline_point(const RunRecord& run, const QString& model_name) {
  const auto j = nlohmann::json::parse(run.summary_json.empty() ? "{}" : run.summary_json, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto median = [&](const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) return 0.0;
    if (it->is_number()) return it->get<double>();
    return it->is_object() ? it->value("median", 0.0) : 0.0;
  };
  RooflinePoint p;
  p.tok_s = median("decode_tok_s");
  p.effective_gbs = median("effective_gbs");
  if (p.tok_s <= 0 || p.effective_gbs <= 0) return std::nullopt;
  p.bytes_per_token = j.value("bytes_per_token", 0.0);
  if (p.bytes_per_token <= 0) p.bytes_per_token = p.effective_gbs * 1e9 / p.tok_s;
  p.measured_read_gbs = j.value("measured_read_gbs", 0.0);
  p.run_id = run.id;
  p.model = model_name;
  p.backend = QString::fromStdString(run.backend);
  p.device = QString::fromStdString(run.device);
  const QString what = run.label.empty() ? QString::fromStdString(run.config).remove("backend=") : QString::fromStdString(run.label);
  p.label = QString("#%1 %2").arg(run.id).arg(what.left(40));
  return p;
}

void RooflineModel::set_points(std::vector<RooflinePoint> points, int initial) {
  beginResetModel();
  points_ = std::move(points);
  std::sort(points_.begin(), points_.end(), [](const auto& a, const auto& b) { return a.run_id > b.run_id; });
  QSet<qint64> present;
  for (const auto& p : points_) present.insert(p.run_id);
  chosen_.intersect(present);
  if (!chose_) {
    for (int i = 0; i < initial && i < static_cast<int>(points_.size()); ++i) chosen_.insert(points_[i].run_id);
    chose_ = !points_.empty();
  }
  endResetModel();
  Q_EMIT chosen_changed();
}

std::vector<RooflinePoint> RooflineModel::chosen() const {
  std::vector<RooflinePoint> out;
  for (const auto& p : points_)
    if (chosen_.contains(p.run_id)) out.push_back(p);
  return out;
}

void RooflineModel::set_chosen(qint64 run_id, bool on) {
  for (size_t r = 0; r < points_.size(); ++r)
    if (points_[r].run_id == run_id) setData(index(static_cast<int>(r), kRun), on ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
}

Qt::ItemFlags RooflineModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.column() == kRun) f |= Qt::ItemIsUserCheckable;
  return f;
}

bool RooflineModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.column() != kRun || role != Qt::CheckStateRole) return false;
  const qint64 id = points_[static_cast<size_t>(index.row())].run_id;
  const bool on = value.toInt() == Qt::Checked;
  if (on == chosen_.contains(id)) return true;
  if (on) chosen_.insert(id);
  else chosen_.remove(id);
  chose_ = true;
  Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
  Q_EMIT chosen_changed();
  return true;
}

QVariant RooflineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RooflinePoint& p = points_[static_cast<size_t>(index.row())];
  if (role == Qt::CheckStateRole && index.column() == kRun) return chosen_.contains(p.run_id) ? Qt::Checked : Qt::Unchecked;
  if (role == Qt::TextAlignmentRole && index.column() >= kTokS) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (index.column()) {
    case kRun: return p.label;
    case kModel: return p.model;
    case kBackend: return p.backend;
    case kDevice: return p.device;
    case kTokS: return QString::number(p.tok_s, 'f', 2);
    case kBytes: return QString::number(p.bytes_per_token / 1e6, 'f', 2);
    case kGbs: return QString::number(p.effective_gbs, 'f', 3);
    case kCeiling: return p.measured_read_gbs > 0 ? QString::number(p.measured_read_gbs, 'f', 1) : QString("—");
    case kShare: return p.measured_read_gbs > 0 ? QString::number(100 * p.share(), 'f', 1) + "%" : QString("—");
    default: return {};
  }
}

QVariant RooflineModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kRun: return tr("Run");
    case kModel: return tr("Model");
    case kBackend: return tr("Backend");
    case kDevice: return tr("Device");
    case kTokS: return tr("decode tok/s");
    case kBytes: return tr("MB read / token");
    case kGbs: return tr("eff. GB/s");
    case kCeiling: return tr("measured GB/s");
    case kShare: return tr("share");
    default: return {};
  }
}

}  // namespace p64::ui
