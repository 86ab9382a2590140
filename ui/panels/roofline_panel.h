#pragma once
#include "ui/panels/panel.h"

class QDoubleSpinBox;
class QLabel;
class QTableView;

namespace p64::ui {

class RooflineModel;

// Chosen decode runs on two log-log rooflines: achieved effective GB/s against each device's
// measured read bandwidth, with the plan's G5 line (40% of it by default); and prefill and decode
// FLOP/s against arithmetic intensity under the bandwidth slope and the compute ceiling.
class RooflinePanel : public Panel {
  Q_OBJECT
 public:
  explicit RooflinePanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "roofline"; }
  QString title() const override { return tr("Roofline"); }
  QList<QChartView*> chart_views() const override { return {chart_, compute_chart_}; }

  RooflineModel* runs() const { return runs_; }
  QChartView* chart_view() const { return chart_; }
  QChartView* compute_chart_view() const { return compute_chart_; }
  QDoubleSpinBox* g5_box() const { return g5_; }

 public Q_SLOTS:
  void reload();

 Q_SIGNALS:
  void reloaded();

 private:
  void redraw();

  RooflineModel* runs_;
  QTableView* table_;
  QChartView* chart_;
  QChartView* compute_chart_;
  QDoubleSpinBox* g5_;
  QLabel* summary_;
};

}  // namespace p64::ui
