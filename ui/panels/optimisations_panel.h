#pragma once
#include "ui/panels/panel.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace p64::ui {

class OptimisationFilterProxy;
class OptimisationHistoryModel;
class OptimisationModel;

// The optimisation history browser: every switch with its status, backend and devices, the
// dated changes with reasons and links to the A/B evidence; filters by status, backend,
// device and text. The plan's imported history is there from the first start.
class OptimisationsPanel : public Panel {
  Q_OBJECT
 public:
  explicit OptimisationsPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "optimisations"; }
  QString title() const override { return tr("Optimisations"); }

  OptimisationModel* model() const { return model_; }
  OptimisationFilterProxy* filter() const { return filter_; }
  OptimisationHistoryModel* history() const { return history_; }
  QComboBox* status_box() const { return status_; }
  QComboBox* backend_box() const { return backend_; }
  QComboBox* device_box() const { return device_; }
  QLineEdit* text_box() const { return text_; }
  QTableView* table() const { return table_; }

 public Q_SLOTS:
  void reload();

 Q_SIGNALS:
  void reloaded();

 private:
  void refill_combos();
  void show_history(const QModelIndex& proxy_index);

  OptimisationModel* model_;
  OptimisationFilterProxy* filter_;
  OptimisationHistoryModel* history_;
  QComboBox* status_;
  QComboBox* backend_;
  QComboBox* device_;
  QLineEdit* text_;
  QTableView* table_;
  QTableView* history_table_;
  QLabel* summary_;
};

}  // namespace p64::ui
