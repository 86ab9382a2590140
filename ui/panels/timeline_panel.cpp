#include "ui/panels/timeline_panel.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>


#include "ui/core/workbench.h"
#include "ui/charts/timeline_charts.h"
#include "ui/charts/timeline_track_view.h"
#include "ui/core/store_job.h"
#include "ui/models/timeline_model.h"
#include "ui/models/timeline_spread_model.h"
#include "ui/models/op_roofline_model.h"
#include "ui/models/stored_timeline.h"
#include "ui/charts/op_roofline_chart.h"
#include "ui/charts/compute_roofline_chart.h"
#include "ui/panels/chart_export_actions.h"

namespace p64::ui {

TimelinePanel::TimelinePanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  split_ = new TimelineSplitModel(this);
  spread_ = new TimelineSpreadModel(this);
  run_box_ = new QComboBox(this);
  run_box_->setMinimumContentsLength(40);
  summary_ = new QLabel(tr("No timeline run yet: Run › Timeline (Ctrl+T)."), this);
  fit_ = new QPushButton(tr("Fit"), this);
  fit_->setToolTip(tr("Show every decode step (the wheel zooms about the pointer, a drag pans)"));
  trace_ = new QPushButton(tr("Open in Perfetto…"), this);
  trace_->setToolTip(tr("Write the spans as Chrome trace-event JSON, for Perfetto or chrome://tracing"));
  trace_->setEnabled(false);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Run:"), this));
  bar->addWidget(run_box_);
  bar->addWidget(summary_, 1);
  bar->addWidget(fit_);
  bar->addWidget(trace_);
  bar->addWidget(make_export_charts_button(this, wb_));
  trace_note_ = new QLabel(this);
  trace_note_->setWordWrap(true);
  trace_note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  trace_note_->hide();

  tracks_ = new TimelineTrackView(this);

  layer_view_ = new QChartView(new QChart, this);
  layer_view_->setRenderHint(QPainter::Antialiasing);
  layer_view_->setMinimumHeight(180);
  token_view_ = new QChartView(new QChart, this);
  token_view_->setRenderHint(QPainter::Antialiasing);
  token_view_->setMinimumHeight(150);
  token_view_->setMaximumHeight(190);
  table_ = new QTableView(this);
  table_->setModel(split_);
  table_->verticalHeader()->hide();
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setStretchLastSection(true);
  auto* averages = new QSplitter(Qt::Vertical, this);
  averages->addWidget(layer_view_);
  averages->addWidget(token_view_);
  averages->setStretchFactor(0, 3);
  averages->setStretchFactor(1, 1);

  auto* spread_sorted = new QSortFilterProxyModel(this);
  spread_sorted->setSourceModel(spread_);
  spread_sorted->setSortRole(Qt::UserRole);
  spread_table_ = new QTableView(this);
  spread_table_->setModel(spread_sorted);
  spread_table_->setSortingEnabled(true);
  spread_table_->sortByColumn(-1, Qt::AscendingOrder);  // the model's order until a header is clicked
  spread_table_->verticalHeader()->hide();
  spread_table_->setAlternatingRowColors(true);
  spread_table_->horizontalHeader()->setStretchLastSection(true);

  tabs_ = new QTabWidget(this);
  tabs_->addTab(averages, tr("Per-layer averages"));
  tabs_->addTab(table_, tr("Averages table"));
  tabs_->addTab(spread_table_, tr("Spread across steps"));
  tabs_->addTab(make_roofline_tab(), tr("Per-op roofline"));

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(tracks_);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(trace_note_);
  layout->addWidget(split, 1);

  connect(run_box_, &QComboBox::activated, this, [this](int i) { show_run(run_box_->itemData(i).toLongLong()); });
  connect(fit_, &QPushButton::clicked, tracks_, &TimelineTrackView::fit);
  connect(trace_, &QPushButton::clicked, this, &TimelinePanel::open_in_perfetto);
  connect(&wb_, &Workbench::store_written, this, &TimelinePanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &TimelinePanel::reload);
  fill_layer_split_chart(layer_view_->chart(), *split_);
  fill_token_split_chart(token_view_->chart(), *split_);
  fill_op_roofline_chart(roofline_view_->chart(), *roofline_);
  fill_op_compute_roofline_chart(op_compute_view_->chart(), *roofline_, {});
  reload();
}

QWidget* TimelinePanel::make_roofline_tab() {
  roofline_ = new OpRooflineModel(this);
  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(roofline_);
  sorted->setSortRole(Qt::UserRole);
  auto* table = new QTableView(this);
  table->setModel(sorted);
  table->setSortingEnabled(true);
  table->sortByColumn(-1, Qt::AscendingOrder);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  auto chart_view = [this] {
    auto* v = new QChartView(new QChart, this);
    v->setRenderHint(QPainter::Antialiasing);
    v->setMinimumSize(420, 240);  // a splitter never shown would leave the chart no room
    return v;
  };
  roofline_view_ = chart_view();
  op_compute_view_ = chart_view();
  auto* charts = new QSplitter(Qt::Horizontal, this);
  charts->addWidget(roofline_view_);
  charts->addWidget(op_compute_view_);
  auto* tab = new QSplitter(Qt::Vertical, this);
  tab->addWidget(table);
  tab->addWidget(charts);
  tab->setStretchFactor(0, 2);
  tab->setStretchFactor(1, 3);
  return tab;
}

QList<QChartView*> TimelinePanel::chart_views() const {
  return {layer_view_, token_view_, roofline_view_, op_compute_view_};
}

void TimelinePanel::reload() {
  query_store<std::vector<RunRecord>>(
      wb_, this, tr("Reading timeline runs"), stored_timeline_runs, [this](std::vector<RunRecord> runs) {
        run_box_->clear();
        for (const RunRecord& run : runs)
          run_box_->addItem(QString("#%1 %2 %3 %4").arg(run.id).arg(QString::fromStdString(run.backend),
                                                                  QString::fromStdString(run.started_at),
                                                                  QString::fromStdString(run.label)),
                            QVariant::fromValue<qlonglong>(run.id));
        if (!runs.empty()) show_run(runs.front().id);  // newest first
      });
}

void TimelinePanel::show_run(qint64 run_id) {
  query_store<StoredTimeline>(
      wb_, this, tr("Reading timeline %1").arg(run_id), [run_id](Store& s) { return load_stored_timeline(s, run_id); },
      [this](StoredTimeline o) {
        shown_run_ = o.run_id;
        tracks_->set_spans(o.spans);
        spread_->set_spans(o.spans);
        roofline_->set_ops(summarize_timeline(o.spans).top_ops, o.read_gbs, o.compute);
        fill_op_roofline_chart(roofline_view_->chart(), *roofline_);
        fill_op_compute_roofline_chart(op_compute_view_->chart(), *roofline_, QString::fromStdString(o.run.device));
        split_->set_spans(std::move(o.spans));
        fill_layer_split_chart(layer_view_->chart(), *split_);
        fill_token_split_chart(token_view_->chart(), *split_);
        table_->resizeColumnsToContents();
        spread_table_->resizeColumnsToContents();
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

QString TimelinePanel::default_trace_path() const {
  const QFileInfo store(wb_.store_path());
  return store.dir().filePath(QString("%1-timeline-%2.json").arg(store.completeBaseName()).arg(shown_run_));
}

QString TimelinePanel::write_trace(const QString& path) {
  try {
    OutputPolicy policy;  // the user chose the path (the dialog asked before replacing a file)
    policy.reads(wb_.store_path().toStdString(), "the lab store this panel reads");
    write_chrome_trace(path.toStdString(), split_->spans(), "p64lab timeline run " + std::to_string(shown_run_),
                       policy);
  } catch (const std::exception& e) {
    trace_note_->setText(tr("The trace was not written: %1").arg(QString::fromUtf8(e.what()).toHtmlEscaped()));
    trace_note_->show();
    Q_EMIT wb_.message(QString::fromUtf8(e.what()));
    return {};
  }
  // The app opens nothing itself and reaches no network: Perfetto's UI loads the file in the
  // browser, and a local Perfetto UI works offline.
  trace_note_->setText(tr("Trace written to <b>%1</b>. Open it at https://ui.perfetto.dev (Open trace file) or in a "
                          "local Perfetto UI; the file stays on this machine.")
                           .arg(path.toHtmlEscaped()));
  trace_note_->show();
  Q_EMIT wb_.message(tr("Trace written to %1").arg(path));
  return path;
}

void TimelinePanel::open_in_perfetto() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Write the trace for Perfetto"), default_trace_path(),
                                                    tr("Chrome trace JSON (*.json)"));
  if (!path.isEmpty()) write_trace(path);
}

}  // namespace p64::ui
