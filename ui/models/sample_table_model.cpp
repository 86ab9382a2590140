#include "ui/models/sample_table_model.h"

#include "ui/models/passport_model.h"

namespace p64::ui {

void SampleTableModel::set_samples(std::vector<SampleRecord> samples) {
  beginResetModel();
  samples_ = std::move(samples);
  endResetModel();
}

int SampleTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(samples_.size());
}

QVariant SampleTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(samples_.size())) return {};
  const SampleRecord& s = samples_[static_cast<size_t>(index.row())];
  if (role == Qt::TextAlignmentRole && index.column() >= kDecode) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kDecode: return s.decode_tok_s;
      case kPrefill: return s.prefill_tok_s;
      case kTtft: return s.ttft_ms;
      case kGbs: return s.effective_gbs;
      case kShare: return s.bandwidth_share;
      default: break;
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kRep: return s.rep + 1;
    case kSide: return QString::fromStdString(s.side);
    case kWarm: return s.warm ? tr("warm") : QString();
    case kDecode: return QString::number(s.decode_tok_s, 'f', 2);
    case kPrefill: return QString::number(s.prefill_tok_s, 'f', 2);
    case kTtft: return QString::number(s.ttft_ms, 'f', 2);
    case kGbs: return QString::number(s.effective_gbs, 'f', 3);
    case kShare: return s.bandwidth_share > 0 ? QString("%1%").arg(100 * s.bandwidth_share, 0, 'f', 1) : QString("—");
    case kPeak: return s.peak_device_bytes ? format_bytes(double(s.peak_device_bytes)) : QString("—");
  }
  return {};
}

QVariant SampleTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Run", "Side", "Warm", "Decode tok/s", "Prefill tok/s", "TTFT ms",
                                "Effective GB/s", "Share of BW", "Peak memory"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace p64::ui
