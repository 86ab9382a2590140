#pragma once
#include "ui/panels/panel.h"

class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTableView;

namespace p64::ui {

class PassportModel;

// Host and device facts for each backend this build has, with the measured bandwidth: the one
// measured in this session, else the newest a run stored; "Measure again" asks the backend for
// a fresh passport on a worker thread. A backend that cannot run here is listed with its reason.
class PassportPanel : public Panel {
  Q_OBJECT
 public:
  explicit PassportPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "passport"; }
  QString title() const override { return tr("Passport"); }
  PassportModel* model() const { return model_; }
  QListWidget* backends() const { return backends_; }
  QLabel* note() const { return note_; }
  QString current_backend() const;

 public Q_SLOTS:
  void measure_again();

 Q_SIGNALS:
  void passport_shown(const QString& backend);  // the table shows that backend's facts

 private:
  void show_backend(const QString& name);
  void show_host_only();
  QListWidgetItem* item_of(const QString& name) const;

  PassportModel* model_;
  QListWidget* backends_;
  QTableView* table_;
  QPushButton* measure_;
  QLabel* note_;
};

}  // namespace p64::ui
