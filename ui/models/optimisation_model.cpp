#include "ui/models/optimisation_model.h"

#include <QColor>
#include <QRegularExpression>
#include <QSet>

namespace p64::ui {

namespace {
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// The reason as written (with the plan's section numbers) and the evidence, on hover.
QString reason_tooltip(const OptimisationHistoryEntry& h) {
  QString t = qs(h.reason);
  if (plain_reason(h.reason) != t) t = QObject::tr("As recorded: %1").arg(t);
  return h.evidence.empty() ? t : t + "\n" + qs(h.evidence);
}
}

QString plain_reason(const std::string& reason) {
  QString r = qs(reason).trimmed();
  // The seed plan's section labels: §4.4 is its rule that a default must win its A/B; the rest
  // (§4.2 the product path, §11 the dated captures) only say where in the plan a line came from.
  static const QRegularExpression lead(R"(^§(\d+(?:\.\d+)*)(?:\s+\w+-\w+)?\s*:\s*)");
  static const QRegularExpression rule(R"(\(§4\.4\s*:\s*([^)]*)\))");
  static const QRegularExpression section(R"(\(?§\d+(?:\.\d+)*(?:\s+\w+-\w+)?\s*:?\s*\)?)");
  static const QRegularExpression milestone(R"(\bM\d+\s*:\s*)");
  static const QRegularExpression redirect(R"(\s*\(\s*->\s*R\d+\s*\))");
  static const QRegularExpression spaces(R"(\s{2,})");
  QString prefix;
  const QRegularExpressionMatch m = lead.match(r);
  if (m.hasMatch()) {
    if (m.captured(1) == "4.4") prefix = QObject::tr("not made a default (a default must win its A/B): ");
    r.remove(0, m.capturedLength());
  }
  r.replace(rule, QObject::tr("(a default must win its A/B: \\1)"));
  r.replace(milestone, QObject::tr("later: "));
  r.replace(redirect, QString());
  r.replace(section, QString());
  r.replace(spaces, " ");
  r = prefix + r.trimmed();
  if (!r.isEmpty()) r[0] = r[0].toUpper();
  return r;
}

QColor opt_status_color(OptStatus s) {
  switch (s) {
    case OptStatus::Default: return QColor(0x4c, 0xaf, 0x50);
    case OptStatus::OptIn: return QColor(0x3d, 0x85, 0xc6);
    case OptStatus::Rejected: return QColor(0xd0, 0x4a, 0x4a);
    case OptStatus::Candidate: return QColor(0xe0, 0x8a, 0x2c);
  }
  return QColor(0x90, 0x90, 0x90);
}

void OptimisationModel::set_rows(std::vector<OptimisationRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

const OptimisationRow* OptimisationModel::row_at(int row) const {
  return (row >= 0 && row < static_cast<int>(rows_.size())) ? &rows_[static_cast<size_t>(row)] : nullptr;
}

QStringList OptimisationModel::backends() const {
  QSet<QString> s;
  for (const auto& r : rows_) s.insert(qs(r.opt.backend));
  QStringList l(s.begin(), s.end());
  l.sort();
  return l;
}

QStringList OptimisationModel::devices() const {
  QSet<QString> s;
  for (const auto& r : rows_)
    for (const QString& d : r.devices) s.insert(d);
  QStringList l(s.begin(), s.end());
  l.sort();
  return l;
}

int OptimisationModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant OptimisationModel::data(const QModelIndex& index, int role) const {
  const OptimisationRow* row = row_at(index.row());
  if (!row || !index.isValid()) return {};
  const OptimisationRecord& o = row->opt;
  const OptimisationHistoryEntry* last = row->history.empty() ? nullptr : &row->history.back();
  if (role == Qt::ForegroundRole && index.column() == kStatus) return opt_status_color(o.status);
  if (role == Qt::ToolTipRole && (index.column() == kReason || index.column() == kDescription))
    return index.column() == kReason ? (last ? reason_tooltip(*last) : QString()) : qs(o.description);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case kName: return o.imported ? QString("%1 [imported]").arg(qs(o.name)) : qs(o.name);
    case kBackend: return qs(o.backend);
    case kStatus: return qs(to_string(o.status));
    case kDevices: return row->devices.join(", ");
    case kLastChange: return last ? qs(last->at) : QString();
    case kReason: return last ? plain_reason(last->reason) : QString();
    case kDescription: return qs(o.description);
  }
  return {};
}

QVariant OptimisationModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Switch", "Backend", "Status", "Devices", "Last change", "Reason", "Description"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

OptimisationFilterProxy::OptimisationFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void OptimisationFilterProxy::set_status(std::optional<OptStatus> status) {
  status_ = status;
  invalidateFilter();
}
void OptimisationFilterProxy::set_backend(const QString& b) {
  backend_ = b;
  invalidateFilter();
}
void OptimisationFilterProxy::set_device(const QString& d) {
  device_ = d;
  invalidateFilter();
}
void OptimisationFilterProxy::set_text(const QString& t) {
  text_ = t.trimmed();
  invalidateFilter();
}

bool OptimisationFilterProxy::filterAcceptsRow(int source_row, const QModelIndex&) const {
  const auto* m = static_cast<const OptimisationModel*>(sourceModel());
  const OptimisationRow* row = m->row_at(source_row);
  if (!row) return false;
  if (status_ && row->opt.status != *status_) return false;
  if (!backend_.isEmpty() && qs(row->opt.backend) != backend_) return false;
  if (!device_.isEmpty() && !row->devices.contains(device_)) return false;
  if (text_.isEmpty()) return true;
  auto has = [this](const std::string& s) { return qs(s).contains(text_, Qt::CaseInsensitive); };
  if (has(row->opt.name) || has(row->opt.description)) return true;
  for (const auto& h : row->history)
    if (has(h.reason) || has(h.evidence)) return true;
  return false;
}

void OptimisationHistoryModel::set_history(std::vector<OptimisationHistoryEntry> history) {
  beginResetModel();
  history_ = std::move(history);
  endResetModel();
}

const OptimisationHistoryEntry* OptimisationHistoryModel::entry_at(int row) const {
  return (row >= 0 && row < static_cast<int>(history_.size())) ? &history_[static_cast<size_t>(row)] : nullptr;
}

int OptimisationHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(history_.size());
}

QVariant OptimisationHistoryModel::data(const QModelIndex& index, int role) const {
  const OptimisationHistoryEntry* h = entry_at(index.row());
  if (!h || !index.isValid()) return {};
  if (role == Qt::ForegroundRole && index.column() == kChange) return opt_status_color(h->new_status);
  if (role == Qt::ToolTipRole && index.column() == kReason) return reason_tooltip(*h);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (index.column()) {
    case kAt: return qs(h->at) + (h->imported ? " [imported]" : "");
    case kChange:
      return h->old_status ? QString("%1 → %2").arg(qs(to_string(*h->old_status)), qs(to_string(h->new_status)))
                           : qs(to_string(h->new_status));
    case kReason: return plain_reason(h->reason);
    case kEvidence: return qs(h->evidence);
    case kRun: return h->evidence_run_id ? QString("A/B run %1").arg(h->evidence_run_id) : QString();
  }
  return {};
}

QVariant OptimisationHistoryModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"When", "Status", "Reason", "Evidence", "A/B evidence"};
  return section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace p64::ui
