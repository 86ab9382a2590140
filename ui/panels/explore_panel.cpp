#include "ui/panels/explore_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/core/workbench.h"
#include "ui/core/store_job.h"
#include "ui/models/explore_matrix_model.h"

namespace p64::ui {

struct ExploreList {
  std::vector<ExploreMatrix> matrices;  // newest first
};

ExplorePanel::ExplorePanel(Workbench& wb, QWidget* parent)
    : Panel(wb, parent), matrices_(std::make_shared<ExploreList>()) {
  model_ = new ExploreMatrixModel(this);
  explores_ = new QComboBox(this);
  explores_->setMinimumContentsLength(32);
  plan_ = new QLabel(this);
  plan_->setWordWrap(true);
  plan_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_ = new QLabel(this);

  table_ = new QTableView(this);
  table_->setModel(model_);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setSelectionBehavior(QAbstractItemView::SelectItems);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setMinimumSectionSize(170);  // a heatmap reads better in even cells
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(34);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Explore:"), this));
  bar->addWidget(explores_, 1);
  bar->addWidget(summary_);
  auto* legend = new QLabel(tr("A cell is median(B)/median(A) decode tok/s of its interleaved A/B and the verdict by "
                               "the plan's rule; * p &lt; 0.05 (Mann-Whitney U); ! machine busy. Green faster, red "
                               "slower, pale not significant, grey not measured yet. Double-click a cell to open its "
                               "A/B run."),
                            this);
  legend->setWordWrap(true);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(plan_);
  layout->addWidget(table_, 1);
  layout->addWidget(legend);

  connect(explores_, &QComboBox::currentIndexChanged, this, &ExplorePanel::show_matrix);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    const qint64 run = i.data(ExploreMatrixModel::kRunIdRole).toLongLong();
    if (run > 0) wb_.show_run(run);
  });
  connect(&wb_, &Workbench::store_written, this, &ExplorePanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &ExplorePanel::reload);
  reload();
}

void ExplorePanel::reload() {
  query_store<ExploreList>(
      wb_, this, tr("Reading the explore matrices"),
      [](Store& s) { return ExploreList{load_explore_matrices(s)}; },
      [this](ExploreList list) {
        const QString keep = explores_->currentData().toString();
        *matrices_ = std::move(list);
        {
          QSignalBlocker block(explores_);
          explores_->clear();
          for (const ExploreMatrix& m : matrices_->matrices)
            explores_->addItem(tr("%1 (%2 x %3, %4)")
                                   .arg(QString::fromStdString(m.name))
                                   .arg(m.rows())
                                   .arg(m.columns())
                                   .arg(QString::fromStdString(m.created_at)),
                               QString::fromStdString(m.name));
          explores_->setCurrentIndex(std::max(0, explores_->findData(keep)));
        }
        show_matrix(explores_->currentIndex());
        Q_EMIT reloaded();
      },
      [this](const QString& m) { summary_->setText(tr("Store not readable: %1").arg(m)); });
}

void ExplorePanel::show_matrix(int index) {
  if (index < 0 || static_cast<size_t>(index) >= matrices_->matrices.size()) {
    model_->set_matrix({});
    plan_->setText(tr("No explore in this store. `p64 explore --models A.p64,B.p64 --sets \"opt.x=1;opt.y=2\"` "
                      "measures one A/B per model and switch set and stores each cell as it ends."));
    summary_->clear();
    return;
  }
  const ExploreMatrix& m = matrices_->matrices[static_cast<size_t>(index)];
  model_->set_matrix(m);
  plan_->setText(tr("A = %1; B = A + the column's set. %2 runs a side, %3 decode tokens after %4 prompt tokens.")
                     .arg(QString::fromStdString(m.plan.baseline))
                     .arg(m.plan.runs)
                     .arg(m.plan.tokens)
                     .arg(m.plan.prompt_tokens));
  summary_->setText(model_->summary());
}

}  // namespace p64::ui
