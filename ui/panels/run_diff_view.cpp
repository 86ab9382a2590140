#include "ui/panels/run_diff_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include <limits>

#include "ui/core/workbench.h"
#include "ui/core/store_job.h"
#include "ui/models/run_diff_model.h"
#include "ui/panels/spin_box.h"
#include "ui/panels/table_view.h"

namespace p64::ui {

RunDiffView::RunDiffView(Workbench& wb, QWidget* parent) : QWidget(parent), wb_(wb) {
  model_ = new RunDiffModel(this);
  run_b_ = make_spin_box(1, std::numeric_limits<int>::max(), 1, this);
  run_b_->setToolTip(tr("The id of the run to compare with (the Runs table's first column)"));
  diff_ = new QPushButton(tr("Diff"), this);
  diff_->setEnabled(false);
  a_label_ = new QLabel(tr("Select a run above: it becomes A."), this);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  table_ = make_table(model_, this, TableSelection::OneRow);

  auto* bar = new QHBoxLayout;
  bar->addWidget(a_label_, 1);
  bar->addWidget(new QLabel(tr("B: run"), this));
  bar->addWidget(run_b_);
  bar->addWidget(diff_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(note_);
  layout->addWidget(table_, 1);

  connect(diff_, &QPushButton::clicked, this, &RunDiffView::diff);
}

void RunDiffView::set_run_a(const RunRecord& run) {
  a_ = run;
  diff_->setEnabled(run.id > 0);
  model_->clear();
  if (run.kind == RunKind::Ab) {
    a_label_->setText(tr("A/B run %1: its two sides").arg(run.id));
    diff();
    return;
  }
  a_label_->setText(tr("A: run %1 (%2, %3)")
                        .arg(run.id)
                        .arg(QString::fromUtf8(to_string(run.kind).data()), QString::fromStdString(run.backend)));
  note_->setText(tr("Choose run B and press Diff. A diff needs two timeline runs (p64 timeline, or Timeline in "
                    "this page's session box), which store their ops; an A/B run shows its two sides."));
}

void RunDiffView::diff() {
  if (a_.id <= 0) return;
  const int64_t a = a_.id, b = run_b_->value();
  const bool sides = a_.kind == RunKind::Ab;
  query_store<RunDiff>(
      wb_, this, sides ? tr("Diffing the sides of A/B run %1").arg(a) : tr("Diffing runs %1 and %2").arg(a).arg(b),
      [a, b, sides](Store& s) { return sides ? diff_ab_sides(s, a) : diff_runs(s, a, b); },
      [this](RunDiff d) {
        note_->setText(QString::fromStdString(d.note));
        model_->set_diff(std::move(d));
        table_->resizeColumnsToContents();
        Q_EMIT diffed();
      },
      [this](const QString& m) {
        model_->clear();
        note_->setText(m);
        Q_EMIT diffed();
      });
}

}  // namespace p64::ui
