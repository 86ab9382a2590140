#pragma once
#include <QPointer>

#include <vector>

#include "ui/panels/panel.h"

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTabWidget;

namespace p64::ui {

class Job;
struct DepthSweepPoint;
class KeyValueModel;
class PassportModel;
class RunDiffView;
class RunFilterProxy;
class RunTableModel;
class SampleTableModel;

// Start decode-proxy and timeline sessions (model, backend config, tokens, runs; a decode-proxy
// over several depths is a depth sweep) with progress and cancel; browse the store's runs (filter,
// sort) and one run's samples, options, passport, and the depth sweep it belongs to as a chart.
class RunsPanel : public Panel {
  Q_OBJECT
 public:
  explicit RunsPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "runs"; }
  QString title() const override { return tr("Runs"); }

  RunTableModel* runs() const { return runs_; }
  RunFilterProxy* filter() const { return filter_; }
  SampleTableModel* samples() const { return samples_; }
  KeyValueModel* details() const { return details_; }
  KeyValueModel* gpu() const { return gpu_; }  // the shown run's GPU clocks, power, throttling and tok/J
  QSpinBox* tokens_box() const { return tokens_; }
  QSpinBox* prompt_box() const { return prompt_; }
  QSpinBox* runs_box() const { return reps_; }
  QSpinBox* warmup_box() const { return warmup_; }
  QLineEdit* depth_edit() const { return depths_; }
  QChartView* depth_chart() const { return depth_view_; }
  RunDiffView* diff_view() const { return diff_view_; }
  QLineEdit* config_edit() const { return config_; }
  QLabel* result_label() const { return result_; }
  bool session_running() const { return !session_.isNull(); }

 public Q_SLOTS:
  void start_decode_proxy();
  void start_timeline();
  void cancel_session();
  void reload();
  void select_run(qint64 run_id);

 Q_SIGNALS:
  void session_finished(qint64 run_id);  // 0 when it failed or was cancelled
  void reloaded();
  void run_shown(qint64 run_id);

 private:
  void begin_session(Job* job);
  void show_hint();  // what to do next, while no session's outcome is shown
  void show_run(const QModelIndex& proxy_index);
  void start_depth_sweep(const std::vector<int>& depths);
  void show_sweep(const std::vector<DepthSweepPoint>& points);

  RunTableModel* runs_;
  RunFilterProxy* filter_;
  SampleTableModel* samples_;
  KeyValueModel* details_;
  KeyValueModel* gpu_;
  PassportModel* passport_;
  QComboBox* kind_;
  QLineEdit* config_;
  QSpinBox* tokens_;
  QSpinBox* prompt_;
  QSpinBox* reps_;
  QSpinBox* warmup_;
  QLineEdit* depths_;
  QLineEdit* label_;
  QPushButton* start_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* result_;
  QComboBox* kind_filter_;
  QLineEdit* text_filter_;
  QCheckBox* imported_;
  QTableView* table_;
  QTabWidget* detail_tabs_;
  QChartView* depth_view_;
  RunDiffView* diff_view_;
  QPointer<Job> session_;
  qint64 pending_select_ = 0;
  bool hint_shown_ = false;
};

}  // namespace p64::ui
