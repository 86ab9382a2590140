#pragma once
#include "ui/panels/panel.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTableView;

namespace p64::ui {

class PassportModel;

// Host and device facts for each backend this build has, with the measured bandwidth;
// "Measure again" asks the backend for a fresh passport on a worker thread.
class PassportPanel : public Panel {
  Q_OBJECT
 public:
  explicit PassportPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "passport"; }
  QString title() const override { return tr("Passport"); }
  PassportModel* model() const { return model_; }

 public Q_SLOTS:
  void measure_again();

 private:
  void show_backend(const QString& name);

  PassportModel* model_;
  QListWidget* backends_;
  QTableView* table_;
  QPushButton* measure_;
  QLabel* note_;
};

}  // namespace p64::ui
