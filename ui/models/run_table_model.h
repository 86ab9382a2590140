#pragma once
#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <optional>
#include <vector>

#include "ui/models/store_snapshot.h"

namespace p64::ui {

// The store's runs, newest first: kind, status, decode tok/s (median with min–max; next to the
// status so that the measurement stays in sight however long a model, device or config name is),
// model, backend, device, config, when, label. Qt::UserRole gives sortable raw values.
class RunTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kId, kKind, kStatus, kDecode, kModel, kBackend, kDevice, kConfig, kStarted, kLabel, kColumns };
  explicit RunTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}

  void set_rows(std::vector<RunRow> rows);
  const RunRow* row_at(int row) const;
  const std::vector<RunRow>& rows() const { return rows_; }
  int row_of_run(int64_t run_id) const;  // -1 when absent

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : kColumns; }
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<RunRow> rows_;
};

// Filter by kind and by free text over model, backend, device, config and label.
class RunFilterProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit RunFilterProxy(QObject* parent = nullptr);
  void set_kind(std::optional<RunKind> kind);
  void set_text(const QString& text);
  void set_show_imported(bool show);

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  std::optional<RunKind> kind_;
  QString text_;
  bool show_imported_ = true;
};

}  // namespace p64::ui
