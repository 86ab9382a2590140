#pragma once
// The Runs page's diff tab: the shown run as A against a run B chosen by id, per op and per
// headline figure (engine/lab/run_diff.h); an A/B run diffs its own two sides.
#include <QWidget>

#include "ui/models/run_diff_model.h"  // RunRecord, through the diff it shows

class QLabel;
class QPushButton;
class QSpinBox;
class QTableView;

namespace p64::ui {

class RunDiffModel;
class Workbench;

class RunDiffView : public QWidget {
  Q_OBJECT
 public:
  RunDiffView(Workbench& wb, QWidget* parent = nullptr);
  // The run the Runs page shows becomes A; an A/B run is diffed against itself side by side.
  void set_run_a(const RunRecord& run);

  RunDiffModel* model() const { return model_; }
  QSpinBox* run_b_box() const { return run_b_; }
  QPushButton* diff_button() const { return diff_; }
  QLabel* note_label() const { return note_; }

 public Q_SLOTS:
  void diff();

 Q_SIGNALS:
  void diffed();  // the table holds a new diff, or the note says why not

 private:
  Workbench& wb_;
  RunRecord a_;
  RunDiffModel* model_;
  QSpinBox* run_b_;
  QPushButton* diff_;
  QLabel* a_label_;
  QLabel* note_;
  QTableView* table_;
};

}  // namespace p64::ui
