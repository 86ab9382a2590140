#pragma once
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <optional>
#include <vector>

#include "ui/models/store_snapshot.h"

namespace p64::ui {

// The optimisation registry with its history: one row per switch and backend, with status
// (default / opt-in / rejected / candidate), devices its evidence came from, the latest
// change and its reason. Imported plan history rows are marked.
class OptimisationModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kBackend, kStatus, kDevices, kLastChange, kReason, kDescription, kColumns };
  explicit OptimisationModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_rows(std::vector<OptimisationRow> rows);
  const OptimisationRow* row_at(int row) const;
  QStringList backends() const;
  QStringList devices() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<OptimisationRow> rows_;
};

// Filter by status, backend, device and text (name, description, every reason and evidence).
class OptimisationFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit OptimisationFilterProxy(QObject* parent = nullptr);
  void set_status(std::optional<OptStatus> status);
  void set_backend(const QString& backend);  // empty = any
  void set_device(const QString& device);    // empty = any
  void set_text(const QString& text);

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  std::optional<OptStatus> status_;
  QString backend_, device_, text_;
};

// The dated status changes of one switch, oldest first, with reason and evidence.
class OptimisationHistoryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kAt, kChange, kReason, kEvidence, kRun, kColumns };
  explicit OptimisationHistoryModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_history(std::vector<OptimisationHistoryEntry> history);
  const OptimisationHistoryEntry* entry_at(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<OptimisationHistoryEntry> history_;
};

QColor opt_status_color(OptStatus s);

// A status change's reason in words a user follows: the seed plan's section numbers (§4.4, §11)
// and milestone tags (M1, -> R2) taken out or said in words; the reason as recorded stays in the
// Reason column's tooltip.
QString plain_reason(const std::string& reason);

}  // namespace p64::ui
