#include "ui/panels/builds_panel.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/core/workbench.h"
#include "ui/charts/revision_chart.h"
#include "ui/core/store_job.h"
#include "ui/models/commit_compare_model.h"
#include "ui/panels/table_view.h"

namespace p64::ui {
namespace {

QString one_sided(const CommitCompare& c) {
  QStringList lines;
  for (const auto& g : c.only_baseline) lines << QObject::tr("only in %1: %2").arg(QString::fromStdString(c.baseline), QString::fromStdString(g));
  for (const auto& g : c.only_against) lines << QObject::tr("only in %1: %2").arg(QString::fromStdString(c.against), QString::fromStdString(g));
  return lines.join('\n');
}

}  // namespace

BuildsPanel::BuildsPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  model_ = new CommitCompareModel(this);
  baseline_ = new QComboBox(this);
  against_ = new QComboBox(this);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  table_ = make_table(model_, this, TableSelection::OneRow);
  chart_ = new QChartView(new QChart, this);
  chart_->setRenderHint(QPainter::Antialiasing);
  fill_revision_chart(chart_->chart(), {}, {});

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("A (baseline build):"), this));
  bar->addWidget(baseline_, 1);
  bar->addWidget(new QLabel(tr("B:"), this));
  bar->addWidget(against_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(chart_);
  chart_->setMinimumHeight(260);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* legend = new QLabel(tr("Stored decode-proxy runs of each build, pooled per model, backend, device, config and "
                               "token counts, compared by the A/B rule's Mann-Whitney test: a regression or faster is "
                               "significant and past the 2% band. The builds' runs were not interleaved: rerun both "
                               "side by side before acting on a small flag."),
                            this);
  legend->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  layout->addWidget(legend);

  connect(baseline_, &QComboBox::currentIndexChanged, this, &BuildsPanel::compare);
  connect(against_, &QComboBox::currentIndexChanged, this, &BuildsPanel::compare);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& cur) { show_history(cur.row()); });
  connect(&wb_, &Workbench::store_written, this, &BuildsPanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &BuildsPanel::reload);
  reload();
}

void BuildsPanel::reload() {
  query_store<std::vector<StoredRevision>>(
      wb_, this, tr("Reading the builds"), [](Store& s) { return stored_revisions(s); },
      [this](std::vector<StoredRevision> revs) {
        const QString keep_a = baseline_->currentData().toString(), keep_b = against_->currentData().toString();
        {
          QSignalBlocker block_a(baseline_), block_b(against_);
          baseline_->clear();
          against_->clear();
          for (const StoredRevision& r : revs) {
            const QString label = tr("%1 (%2 runs, %3)")
                                      .arg(QString::fromStdString(r.revision))
                                      .arg(r.runs)
                                      .arg(QString::fromStdString(r.last_run_at));
            baseline_->addItem(label, QString::fromStdString(r.revision));
            against_->addItem(label, QString::fromStdString(r.revision));
          }
          // by default the newest build (B) against the one before it (A)
          const int n = baseline_->count();
          baseline_->setCurrentIndex(baseline_->findData(keep_a) >= 0 ? baseline_->findData(keep_a) : std::max(0, n - 2));
          against_->setCurrentIndex(against_->findData(keep_b) >= 0 ? against_->findData(keep_b) : n - 1);
        }
        compare();
        Q_EMIT reloaded();
      },
      [this](const QString& m) { summary_->setText(tr("Store not readable: %1").arg(m)); });
}

void BuildsPanel::compare() {
  const std::string a = baseline_->currentData().toString().toStdString();
  const std::string b = against_->currentData().toString().toStdString();
  if (baseline_->count() < 2 || a.empty() || b.empty() || a == b) {
    model_->set_compare({});
    fill_revision_chart(chart_->chart(), {}, {});
    summary_->setText(baseline_->count() < 2
                          ? tr("The store holds decode-proxy runs of %1 build(s); comparing needs two. Every build "
                               "records its git revision in its runs.")
                                .arg(baseline_->count())
                          : tr("Choose two different builds."));
    Q_EMIT compared();
    return;
  }
  query_store<CommitCompare>(
      wb_, this, tr("Comparing builds"), [a, b](Store& s) { return compare_commits(s, a, b); },
      [this](CommitCompare result) {
        model_->set_compare(std::move(result));
        fill_revision_chart(chart_->chart(), {}, {});
        table_->resizeColumnsToContents();
        const CommitCompare& c = model_->compare();
        summary_->setText(tr("%1 group(s) both builds measured, %2 regression(s); %3 group(s) measured by one build "
                             "only (tooltip)")
                              .arg(c.rows.size())
                              .arg(c.regressions())
                              .arg(c.only_baseline.size() + c.only_against.size()));
        summary_->setToolTip(one_sided(c));
        if (model_->rowCount() > 0) table_->setCurrentIndex(model_->index(0, 0));  // its history below
        Q_EMIT compared();
      },
      [this](const QString& error) {
        model_->set_compare({});
        fill_revision_chart(chart_->chart(), {}, {});
        summary_->setText(error);
        summary_->setToolTip({});
        Q_EMIT compared();
      });
}

void BuildsPanel::show_history(int row) {
  const CommitCompareRow* r = model_->row_at(row);
  if (!r) return;
  const MeasurementGroup group = r->group;
  const QString title = QStringLiteral("%1, %2, %3")
                            .arg(QString::fromStdString(r->model), QString::fromStdString(r->config))
                            .arg(QStringLiteral("%1+%2 tokens").arg(r->prompt_tokens).arg(r->decode_tokens));
  query_store<std::vector<RevisionPoint>>(
      wb_, this, tr("Reading the build history"), [group](Store& s) { return group_history(s, group); },
      [this, title](std::vector<RevisionPoint> points) {
        fill_revision_chart(chart_->chart(), points, title);
        Q_EMIT history_shown();
      });
}

}  // namespace p64::ui
