#pragma once
#include <QPointer>

#include "ui/models/ab_view.h"
#include "ui/panels/panel.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace p64::ui {

class Job;

// Two configurations side by side, each on the open model or on a model file of its own (backend, options typed as opt.NAME=VALUE or
// picked from the backend's switches), measured interleaved by the A/B harness on a worker
// thread; then the tok/s chart with whiskers, B/A, the quality gates, the verdict with its rule,
// and what the harness recorded (the A/B run, its comparison, the switch's history entry).
class AbPanel : public Panel {
  Q_OBJECT
 public:
  explicit AbPanel(Workbench& wb, QWidget* parent = nullptr);
  QString id() const override { return "ab"; }
  QString title() const override { return tr("A/B"); }
  QList<QChartView*> chart_views() const override { return {chart_, split_chart_}; }

  struct SideEditor {
    QLineEdit* model = nullptr;  // empty: the open model (B: A's model)
    QComboBox* backend = nullptr;
    QLineEdit* options = nullptr;
    QComboBox* switches = nullptr;
    QLabel* figures = nullptr;
  };
  const SideEditor& side_a() const { return a_; }
  const SideEditor& side_b() const { return b_; }
  QString config_a() const;
  QString config_b() const;
  // The model file each side runs: A's field or the open model; B's field or A's model.
  QString model_a() const;
  QString model_b() const;
  QSpinBox* runs_box() const { return runs_; }
  QSpinBox* warmup_box() const { return warmup_; }
  QSpinBox* tokens_box() const { return tokens_; }
  QSpinBox* quality_tokens_box() const { return quality_tokens_; }
  QChartView* chart_view() const { return chart_; }
  QChartView* split_chart_view() const { return split_chart_; }
  QCheckBox* split_box() const { return split_; }
  AbQualityModel* quality() const { return quality_; }
  const AbView& view() const { return view_; }
  QLabel* verdict_label() const { return verdict_; }
  QLabel* ratio_label() const { return ratio_; }
  QLabel* recorded_label() const { return recorded_; }
  QLabel* status_label() const { return status_; }
  bool running() const { return !job_.isNull(); }

  // Appends or replaces opt.NAME=VALUE in a side's option text (the switch picker uses it).
  static QString with_switch(const QString& options, const QString& name, const QString& value);

 public Q_SLOTS:
  void start_ab();
  void cancel_ab();
  void show_view(const p64::ui::AbView& view);
  void reload();  // shows the store's latest A/B run

 Q_SIGNALS:
  void ab_finished(qint64 run_id);  // 0 when it failed, was cancelled or stored nothing
  void reloaded();

 private:
  QWidget* make_side(const QString& name, SideEditor* side, const QString& options);
  void fill_switches(SideEditor* side);
  void set_running(bool on);
  void update_start();

  SideEditor a_, b_;
  QLabel* model_;
  QSpinBox* runs_;
  QSpinBox* warmup_;
  QSpinBox* tokens_;
  QSpinBox* prompt_;
  QSpinBox* quality_tokens_;
  QPushButton* start_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QChartView* chart_;
  QChartView* split_chart_;
  QCheckBox* split_;
  QLabel* ratio_;
  AbQualityModel* quality_;
  QTableView* quality_table_;
  QLabel* verdict_;
  QLabel* rule_;
  QLabel* recorded_;
  QPushButton* show_run_;
  QPushButton* show_history_;
  AbView view_;
  QPointer<Job> job_;
};

}  // namespace p64::ui
