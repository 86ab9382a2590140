#include "ui/models/op_roofline_model.h"

#include <QColor>

#include "ui/models/roofline_model.h"

namespace p64::ui {

void OpRooflineModel::set_ops(const std::vector<OpTotal>& ops, double ceiling_gbs, const ComputeCeiling& compute) {
  beginResetModel();
  ops_.clear();
  for (const OpTotal& o : ops)
    if (o.gbs() > 0) ops_.push_back(o);
  ceiling_ = ceiling_gbs;
  compute_ = compute;
  endResetModel();
}

QString OpRooflineModel::ceiling_flops_kind() const {
  return compute_ceiling_kind(compute_.flops, QString::fromStdString(compute_.source));
}

int OpRooflineModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(ops_.size()); }

QVariant OpRooflineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const OpTotal& o = ops_[static_cast<size_t>(index.row())];
  const double share = ceiling_ > 0 ? o.gbs() / ceiling_ : 0;
  const double peak_share = compute_.flops > 0 ? o.gflops() * 1e9 / compute_.flops : 0;
  const bool counted = o.gflops() > 0;
  if (role == Qt::UserRole) {  // raw values for sorting
    switch (index.column()) {
      case kMs: return o.ms;
      case kMb: return o.mb;
      case kGbs: return o.gbs();
      case kShare: return share;
      case kGflops: return o.gflops();
      case kIntensity: return o.intensity();
      case kPeakShare: return peak_share;
      default: return QString::fromStdString(o.name);
    }
  }
  if (role == Qt::ForegroundRole && index.column() == kShare && ceiling_ > 0 && share < 0.5) return QColor(207, 34, 46);
  if (role == Qt::TextAlignmentRole && index.column() >= kMs) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && index.column() == kPeakShare) return QString::fromStdString(compute_.source);
  if (role != Qt::DisplayRole) return {};
  const QString none = QStringLiteral("—");
  switch (index.column()) {
    case kOp: return QString::fromStdString(o.name);
    case kGroup: return QString::fromStdString(o.group);
    case kMs: return QString::number(o.ms, 'f', 4);
    case kMb: return QString::number(o.mb, 'f', 2);
    case kGbs: return QString::number(o.gbs(), 'f', 1);
    case kShare: return ceiling_ > 0 ? QString::number(100 * share, 'f', 1) + "%" : none;
    case kGflops: return counted ? QString::number(o.gflops(), 'f', 1) : none;
    case kIntensity: return counted ? QString::number(o.intensity(), 'f', 2) : none;
    case kPeakShare: return counted && compute_.flops > 0 ? QString::number(100 * peak_share, 'f', 2) + "%" : none;
  }
  return {};
}

QVariant OpRooflineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kOp: return tr("op");
    case kGroup: return tr("group");
    case kMs: return tr("ms/step");
    case kMb: return tr("MB/step");
    case kGbs: return tr("GB/s");
    case kShare: return ceiling_ > 0 ? tr("of %1 GB/s").arg(ceiling_, 0, 'f', 0) : tr("of the ceiling");
    case kGflops: return tr("GFLOP/s");
    case kIntensity: return tr("FLOP/byte");
    case kPeakShare: return compute_.flops > 0 ? tr("of %1").arg(format_flop_s(compute_.flops)) : tr("of the compute ceiling");
  }
  return {};
}

}  // namespace p64::ui
