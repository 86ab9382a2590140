#pragma once
#include "ui/panels/panel.h"

class QChartView;
class QComboBox;
class QLabel;
class QPushButton;
class QTableView;
class QTabWidget;

namespace p64::ui {

class TimelineSplitModel;
class OpRooflineModel;
class TimelineSpreadModel;
class TimelineTrackView;

// A stored timeline run: the decode steps on a zoomable track view (a track per op group), and
// beside it the per-layer averages (stacked bars per layer and the whole-token split) and each
// op's spread over the steps. "Open in Perfetto" writes the Chrome trace where the user says.
class TimelinePanel : public Panel {
  Q_OBJECT
 public:
  explicit TimelinePanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "timeline"; }
  QString title() const override { return tr("Timeline"); }
  QList<QChartView*> chart_views() const override;
  TimelineSplitModel* split() const { return split_; }
  TimelineSpreadModel* spread() const { return spread_; }
  OpRooflineModel* roofline() const { return roofline_; }
  TimelineTrackView* track_view() const { return tracks_; }
  QChartView* layer_view() const { return layer_view_; }
  QChartView* token_view() const { return token_view_; }
  QChartView* op_compute_view() const { return op_compute_view_; }
  QTabWidget* tabs() const { return tabs_; }
  QLabel* trace_note() const { return trace_note_; }
  // Where "Open in Perfetto" offers to write: beside the store, named for the run.
  QString default_trace_path() const;

 public Q_SLOTS:
  void reload();
  void show_run(qint64 run_id);
  void open_in_perfetto();                   // asks where, then write_trace()
  QString write_trace(const QString& path);  // returns the path written, empty on failure

 Q_SIGNALS:
  void run_shown(qint64 run_id);

 private:
  QWidget* make_roofline_tab();  // the per-op table beside its bandwidth bars and compute roofline

  TimelineSplitModel* split_;
  TimelineSpreadModel* spread_;
  OpRooflineModel* roofline_;
  QChartView* roofline_view_;
  QChartView* op_compute_view_;
  QComboBox* run_box_;
  QLabel* summary_;
  QPushButton* fit_;
  QPushButton* trace_;
  QLabel* trace_note_;
  TimelineTrackView* tracks_;
  QTabWidget* tabs_;
  QChartView* layer_view_;
  QChartView* token_view_;
  QTableView* table_;
  QTableView* spread_table_;
  qint64 shown_run_ = 0;
};

}  // namespace p64::ui
