#include "ui/panels/timeline_panel.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

#include "ui/app/lab_sessions.h"
#include "ui/app/workbench.h"
#include "ui/charts/timeline_charts.h"
#include "ui/jobs/store_job.h"
#include "ui/models/timeline_model.h"
#include "ui/panels/chart_export_actions.h"

namespace p64::ui {

namespace {
struct TimelineRuns {
  std::vector<RunRecord> runs;
};
struct TimelineOps {
  qint64 run_id = 0;
  std::vector<OpSpan> spans;
  RunRecord run;
};
}  // namespace

TimelinePanel::TimelinePanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  split_ = new TimelineSplitModel(this);
  run_box_ = new QComboBox(this);
  run_box_->setMinimumContentsLength(40);
  summary_ = new QLabel(tr("No timeline run yet: Run › Timeline (Ctrl+T)."), this);
  trace_ = new QPushButton(tr("Open Chrome trace"), this);
  trace_->setToolTip(tr("Write the spans as Chrome trace-event JSON and open it (Perfetto, chrome://tracing)"));
  trace_->setEnabled(false);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Run:"), this));
  bar->addWidget(run_box_);
  bar->addWidget(summary_, 1);
  bar->addWidget(trace_);
  bar->addWidget(make_export_charts_button(this, wb_));

  layer_view_ = new QChartView(new QChart, this);
  layer_view_->setRenderHint(QPainter::Antialiasing);
  layer_view_->setMinimumHeight(300);
  token_view_ = new QChartView(new QChart, this);
  token_view_->setRenderHint(QPainter::Antialiasing);
  token_view_->setMinimumHeight(150);
  token_view_->setMaximumHeight(190);
  table_ = new QTableView(this);
  table_->setModel(split_);
  table_->verticalHeader()->hide();
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setStretchLastSection(true);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(layer_view_);
  split->addWidget(token_view_);
  split->addWidget(table_);
  split->setStretchFactor(0, 4);
  split->setStretchFactor(1, 1);
  split->setStretchFactor(2, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  connect(run_box_, &QComboBox::activated, this, [this](int i) { show_run(run_box_->itemData(i).toLongLong()); });
  connect(trace_, &QPushButton::clicked, this, &TimelinePanel::open_trace);
  connect(&wb_, &Workbench::store_written, this, &TimelinePanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &TimelinePanel::reload);
  fill_layer_split_chart(layer_view_->chart(), *split_);
  fill_token_split_chart(token_view_->chart(), *split_);
  reload();
}

QList<QChartView*> TimelinePanel::chart_views() const { return {layer_view_, token_view_}; }

void TimelinePanel::reload() {
  query_store<TimelineRuns>(
      wb_, this, tr("Reading timeline runs"),
      [](Store& s) {
        RunFilter f;
        f.kind = RunKind::Timeline;
        return TimelineRuns{s.runs(f)};
      },
      [this](TimelineRuns r) {
        std::sort(r.runs.begin(), r.runs.end(), [](const auto& a, const auto& b) { return a.id > b.id; });
        run_box_->clear();
        for (const RunRecord& run : r.runs)
          run_box_->addItem(QString("#%1 %2 %3 %4").arg(run.id).arg(QString::fromStdString(run.backend),
                                                                  QString::fromStdString(run.started_at),
                                                                  QString::fromStdString(run.label)),
                            QVariant::fromValue<qlonglong>(run.id));
        if (!r.runs.empty()) show_run(r.runs.front().id);  // newest first
      });
}

void TimelinePanel::show_run(qint64 run_id) {
  query_store<TimelineOps>(
      wb_, this, tr("Reading timeline %1").arg(run_id),
      [run_id](Store& s) {
        TimelineOps o;
        o.run_id = run_id;
        const auto recs = s.timeline_ops(run_id);
        o.spans = spans_from_records(recs);
        if (auto r = s.run(run_id)) o.run = *r;
        return o;
      },
      [this](TimelineOps o) {
        shown_run_ = o.run_id;
        split_->set_spans(std::move(o.spans));
        fill_layer_split_chart(layer_view_->chart(), *split_);
        fill_token_split_chart(token_view_->chart(), *split_);
        table_->resizeColumnsToContents();
        const int i = run_box_->findData(QVariant::fromValue<qlonglong>(o.run_id));
        if (i >= 0) run_box_->setCurrentIndex(i);
        summary_->setText(tr("%1 spans, %2 decode steps, %3 layers; %4 ms per token")
                              .arg(split_->spans().size())
                              .arg(split_->steps())
                              .arg(split_->layers())
                              .arg(split_->total_ms(), 0, 'f', 3));
        trace_->setEnabled(!split_->spans().empty());
        Q_EMIT run_shown(o.run_id);
      });
}

QString TimelinePanel::write_trace(const QString& path) {
  try {
    write_chrome_trace(path.toStdString(), split_->spans(), "p64lab timeline run " + std::to_string(shown_run_));
    return path;
  } catch (const std::exception& e) {
    Q_EMIT wb_.message(QString::fromUtf8(e.what()));
    return {};
  }
}

void TimelinePanel::open_trace() {
  const QString path = write_trace(QDir::temp().filePath(QString("p64lab-timeline-%1.json").arg(shown_run_)));
  if (path.isEmpty()) return;
  Q_EMIT wb_.message(tr("Trace written to %1 (Perfetto: ui.perfetto.dev › Open trace file)").arg(path));
  QDesktopServices::openUrl(QUrl::fromLocalFile(path));
}

}  // namespace p64::ui
