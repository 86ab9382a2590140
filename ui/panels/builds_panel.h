#pragma once
#include "ui/panels/panel.h"

class QComboBox;
class QLabel;
class QTableView;

namespace p64::ui {

class CommitCompareModel;

// Decode speed across builds (`p64 runs compare`): pick two git revisions the store holds
// decode-proxy runs of; each model/backend/device/config both measured, with its medians, B/A,
// p and a flag past the 2% rule; the selected row's tok/s over every build as a chart.
class BuildsPanel : public Panel {
  Q_OBJECT
 public:
  explicit BuildsPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "builds"; }
  QString title() const override { return tr("Builds"); }
  QList<QChartView*> chart_views() const override { return {chart_}; }

  CommitCompareModel* model() const { return model_; }
  QComboBox* baseline_box() const { return baseline_; }
  QComboBox* against_box() const { return against_; }
  QLabel* summary_label() const { return summary_; }
  QTableView* table() const { return table_; }
  QChartView* chart() const { return chart_; }

 public Q_SLOTS:
  void reload();
  void compare();

 Q_SIGNALS:
  void reloaded();
  void compared();
  void history_shown();

 private:
  void show_history(int row);

  CommitCompareModel* model_;
  QComboBox* baseline_;
  QComboBox* against_;
  QLabel* summary_;
  QTableView* table_;
  QChartView* chart_;
};

}  // namespace p64::ui
