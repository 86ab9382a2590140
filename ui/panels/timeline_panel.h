#pragma once
#include "ui/panels/panel.h"

class QChartView;
class QComboBox;
class QLabel;
class QPushButton;
class QTableView;

namespace p64::ui {

class TimelineSplitModel;

// The per-op split of a stored timeline run: stacked bars per layer and the whole-token
// split, hover for op names and times; the Chrome trace opens in the system's viewer.
class TimelinePanel : public Panel {
  Q_OBJECT
 public:
  explicit TimelinePanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "timeline"; }
  QString title() const override { return tr("Timeline"); }
  QList<QChartView*> chart_views() const override;
  TimelineSplitModel* split() const { return split_; }
  QChartView* layer_view() const { return layer_view_; }
  QChartView* token_view() const { return token_view_; }

 public Q_SLOTS:
  void reload();
  void show_run(qint64 run_id);
  void open_trace();
  QString write_trace(const QString& path);  // returns the path written, empty on failure

 Q_SIGNALS:
  void run_shown(qint64 run_id);

 private:
  TimelineSplitModel* split_;
  QComboBox* run_box_;
  QLabel* summary_;
  QPushButton* trace_;
  QChartView* layer_view_;
  QChartView* token_view_;
  QTableView* table_;
  qint64 shown_run_ = 0;
};

}  // namespace p64::ui
