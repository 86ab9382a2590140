#include "ui/models/timeline_spread_model.h"

namespace p64::ui {

void TimelineSpreadModel::set_spans(const std::vector<OpSpan>& spans) {
  beginResetModel();
  OpSpreadTable t = op_spread(spans);
  rows_.clear();
  size_t next_layer_row = 0;
  for (OpSpread& op : t.ops) {
    const std::string name = op.name;
    rows_.push_back(std::move(op));
    while (next_layer_row < t.layers.size() && t.layers[next_layer_row].name == name)
      rows_.push_back(std::move(t.layers[next_layer_row++]));
  }
  endResetModel();
}

int TimelineSpreadModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant TimelineSpreadModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const OpSpread& r = rows_[static_cast<size_t>(index.row())];
  const double ratio = r.us.min > 0 ? r.us.max / r.us.min : 0;
  if (role == Qt::TextAlignmentRole && index.column() >= kLayer) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && r.layer < 0 && r.fastest_layer >= 0)
    return tr("Layer medians: fastest %1 µs (layer %2), slowest %3 µs (layer %4)")
        .arg(r.fastest_layer_us, 0, 'f', 2)
        .arg(r.fastest_layer)
        .arg(r.slowest_layer_us, 0, 'f', 2)
        .arg(r.slowest_layer);
  if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
  const bool raw = role == Qt::UserRole;
  auto us = [raw](double v) { return raw ? QVariant(v) : QVariant(QString::number(v, 'f', 2)); };
  switch (index.column()) {
    case kOp: return QString::fromStdString(r.name);
    case kGroup: return QString::fromStdString(r.group);
    case kLayer:
      if (raw) return r.layer;
      return r.layer >= 0 ? QString::number(r.layer) : r.fastest_layer >= 0 ? tr("all") : QString("—");
    case kSpans: return r.us.n;
    case kMedian: return us(r.us.median);
    case kMin: return us(r.us.min);
    case kMax: return us(r.us.max);
    case kMaxOverMin: return raw ? QVariant(ratio) : QVariant(QString("%1×").arg(ratio, 0, 'f', 1));
  }
  return {};
}

QVariant TimelineSpreadModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kOp: return tr("Op");
    case kGroup: return tr("Group");
    case kLayer: return tr("Layer");
    case kSpans: return tr("Spans");
    case kMedian: return tr("Median µs");
    case kMin: return tr("Min µs");
    case kMax: return tr("Max µs");
    case kMaxOverMin: return tr("Max/min");
  }
  return {};
}

}  // namespace p64::ui
