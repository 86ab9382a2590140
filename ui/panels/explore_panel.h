#pragma once
#include "ui/panels/panel.h"

class QComboBox;
class QLabel;
class QTableView;

namespace p64::ui {

class ExploreMatrixModel;
struct ExploreList;

// The explore matrices of the store (`p64 explore`) as heatmaps: pick one, read each cell's
// B/A, verdict and significance, double-click a cell to open its A/B run.
class ExplorePanel : public Panel {
  Q_OBJECT
 public:
  explicit ExplorePanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "explore"; }
  QString title() const override { return tr("Explore"); }

  ExploreMatrixModel* model() const { return model_; }
  QComboBox* explore_box() const { return explores_; }
  QTableView* table() const { return table_; }
  QLabel* summary_label() const { return summary_; }

 public Q_SLOTS:
  void reload();

 Q_SIGNALS:
  void reloaded();

 private:
  void show_matrix(int index);

  ExploreMatrixModel* model_;
  QComboBox* explores_;
  QLabel* plan_;
  QLabel* summary_;
  QTableView* table_;
  std::shared_ptr<ExploreList> matrices_;
};

}  // namespace p64::ui
