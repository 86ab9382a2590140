#include "ui/panels/runs_panel.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/depth_sweep.h"
#include "ui/core/lab_sessions.h"
#include "ui/core/passports.h"
#include "ui/core/workbench.h"
#include "ui/core/store_job.h"
#include "ui/charts/depth_chart.h"
#include "ui/models/depth_sweep_points.h"
#include "ui/models/gpu_energy_rows.h"
#include "ui/models/key_value_model.h"
#include "ui/models/passport_model.h"
#include "ui/models/run_table_model.h"
#include "ui/models/sample_table_model.h"
#include "ui/panels/spin_box.h"
#include "ui/panels/run_diff_view.h"
#include "ui/panels/table_view.h"

namespace p64::ui {

namespace {

// A JSON object flattened to "a.b = value" rows for the detail tab.
void flatten(const nlohmann::json& j, const QString& prefix, QVector<KeyValueModel::Row>* rows) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.isEmpty() ? QString::fromStdString(it.key()) : prefix + "." + QString::fromStdString(it.key()), rows);
  } else if (j.is_array() && j.size() > 8) {
    *rows << KeyValueModel::Row{prefix, QString("[%1 items]").arg(j.size())};
  } else {
    *rows << KeyValueModel::Row{prefix, QString::fromStdString(j.is_string() ? j.get<std::string>() : j.dump())};
  }
}

struct RunDetail {
  RunRecord run;
  std::vector<SampleRecord> samples;
  std::optional<Passport> passport;  // none, or one this build cannot read
};
}  // namespace

RunsPanel::RunsPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  runs_ = new RunTableModel(this);
  filter_ = new RunFilterProxy(this);
  filter_->setSourceModel(runs_);
  samples_ = new SampleTableModel(this);
  details_ = new KeyValueModel(this);
  gpu_ = new KeyValueModel(this);
  passport_ = new PassportModel(this);

  // --- new session ---
  auto* form_box = new QGroupBox(tr("New session"), this);
  kind_ = new QComboBox(form_box);
  kind_->addItems({tr("decode-proxy"), tr("timeline")});
  config_ = new QLineEdit(QString("backend=%1").arg(wb_.backend()), form_box);
  config_->setToolTip(tr("Lab configuration, as the CLI takes it: backend=cpu,opt.NAME=VALUE,threads=N,device=D"));
  tokens_ = make_spin_box(1, 4096, 32, form_box);
  prompt_ = make_spin_box(1, 4096, 32, form_box);
  reps_ = make_spin_box(1, 100, 2, form_box);
  warmup_ = make_spin_box(0, 20, 1, form_box);
  depths_ = new QLineEdit(form_box);
  depths_->setPlaceholderText(tr("optional: 0,512,4096 — a depth sweep"));
  depths_->setToolTip(tr("decode-proxy after a prefill of each depth, as llama-bench -d: one stored run per depth, "
                         "each depth in place of the prompt tokens"));
  label_ = new QLineEdit(form_box);
  label_->setPlaceholderText(tr("optional, e.g. the plan's stage name"));
  start_ = new QPushButton(tr("Start"), form_box);
  start_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"), form_box);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(form_box);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  result_ = new QLabel(form_box);
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* form = new QFormLayout;
  form->addRow(tr("Session:"), kind_);
  form->addRow(tr("Config:"), config_);
  form->addRow(tr("Decode tokens:"), tokens_);
  form->addRow(tr("Prompt tokens:"), prompt_);
  form->addRow(tr("Depths:"), depths_);
  form->addRow(tr("Measured runs:"), reps_);
  form->addRow(tr("Warm-up runs:"), warmup_);
  form->addRow(tr("Label:"), label_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(cancel_);
  auto* form_layout = new QVBoxLayout(form_box);
  form_layout->addLayout(form);
  form_layout->addLayout(buttons);
  form_layout->addWidget(progress_);
  form_layout->addWidget(result_);
  form_layout->addStretch(1);
  form_box->setMaximumWidth(380);

  // --- history ---
  kind_filter_ = new QComboBox(this);
  kind_filter_->addItem(tr("All kinds"));
  for (auto k : {RunKind::DecodeProxy, RunKind::Timeline, RunKind::Ab, RunKind::Chat})
    kind_filter_->addItem(QString::fromUtf8(to_string(k).data()), static_cast<int>(k));
  text_filter_ = new QLineEdit(this);
  text_filter_->setPlaceholderText(tr("Filter by model, backend, device, config, label"));
  text_filter_->setClearButtonEnabled(true);
  imported_ = new QCheckBox(tr("Imported plan history"), this);
  imported_->setChecked(true);
  auto* filter_bar = new QHBoxLayout;
  filter_bar->addWidget(kind_filter_);
  filter_bar->addWidget(text_filter_, 1);
  filter_bar->addWidget(imported_);
  table_ = make_table(filter_, this, TableSelection::OneRow);
  table_->setSortingEnabled(true);
  table_->sortByColumn(RunTableModel::kId, Qt::DescendingOrder);

  detail_tabs_ = new QTabWidget(this);
  detail_tabs_->addTab(make_table(samples_, this, TableSelection::OneRow), tr("Samples"));
  detail_tabs_->addTab(make_table(details_, this, TableSelection::OneRow), tr("Options and summary"));
  detail_tabs_->addTab(make_table(gpu_, this, TableSelection::OneRow), tr("GPU and energy"));
  detail_tabs_->addTab(make_table(passport_, this, TableSelection::OneRow), tr("Passport"));
  depth_view_ = new QChartView(new QChart, this);
  depth_view_->setRenderHint(QPainter::Antialiasing);
  fill_depth_chart(depth_view_->chart(), {});
  detail_tabs_->addTab(depth_view_, tr("Depth sweep"));
  diff_view_ = new RunDiffView(wb_, this);
  detail_tabs_->addTab(diff_view_, tr("Diff"));

  auto* history = new QWidget(this);
  auto* history_layout = new QVBoxLayout(history);
  history_layout->setContentsMargins(0, 0, 0, 0);
  history_layout->addLayout(filter_bar);
  auto* vsplit = new QSplitter(Qt::Vertical, history);
  vsplit->addWidget(table_);
  vsplit->addWidget(detail_tabs_);
  vsplit->setStretchFactor(0, 3);
  vsplit->setStretchFactor(1, 2);
  history_layout->addWidget(vsplit, 1);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(form_box);
  layout->addWidget(history, 1);

  connect(start_, &QPushButton::clicked, this, [this] {
    kind_->currentIndex() == 0 ? start_decode_proxy() : start_timeline();
  });
  connect(cancel_, &QPushButton::clicked, this, &RunsPanel::cancel_session);
  // A sweep's depths are its prompt lengths.
  connect(depths_, &QLineEdit::textChanged, this,
          [this](const QString& text) { prompt_->setEnabled(text.trimmed().isEmpty()); });
  connect(kind_filter_, &QComboBox::currentIndexChanged, this, [this](int i) {
    filter_->set_kind(i <= 0 ? std::nullopt : std::optional<RunKind>(static_cast<RunKind>(kind_filter_->itemData(i).toInt())));
  });
  connect(text_filter_, &QLineEdit::textChanged, filter_, &RunFilterProxy::set_text);
  connect(imported_, &QCheckBox::toggled, filter_, &RunFilterProxy::set_show_imported);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& cur) { show_run(cur); });
  connect(&wb_, &Workbench::store_written, this, &RunsPanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &RunsPanel::reload);
  connect(&wb_, &Workbench::run_requested, this, &RunsPanel::select_run);
  connect(&wb_, &Workbench::model_changed, this, &RunsPanel::show_hint);
  connect(&wb_, &Workbench::backend_changed, this, [this] {
    if (config_->text().startsWith("backend=") && !config_->text().contains(','))
      config_->setText(QString("backend=%1").arg(wb_.backend()));
  });
  show_hint();
  reload();
}

void RunsPanel::show_hint() {
  // A session's outcome stays until the next one; only the hint follows the open model.
  if (!hint_shown_ && !result_->text().isEmpty()) return;
  hint_shown_ = true;
  result_->setText(wb_.model_path().isEmpty()
                       ? tr("Open a model in Models (File › Open, Ctrl+O), then start a session.")
                       : tr("Ready: %1 is open. Choose the session and press Start.")
                             .arg(QFileInfo(wb_.model_path()).fileName().toHtmlEscaped()));
}

void RunsPanel::reload() {
  query_store<std::vector<RunRow>>(
      wb_, this, tr("Reading runs"), [](Store& s) { return load_run_rows(s); },
      [this](std::vector<RunRow> rows) {
        runs_->set_rows(std::move(rows));
        table_->resizeColumnsToContents();
        table_->setColumnWidth(RunTableModel::kConfig, std::min(260, table_->columnWidth(RunTableModel::kConfig)));
        if (pending_select_) select_run(pending_select_);
        Q_EMIT reloaded();
      },
      [this](const QString& m) {
        hint_shown_ = false;
        result_->setText(tr("The store could not be read: %1").arg(m));
      });
}

void RunsPanel::select_run(qint64 run_id) {
  const int src = runs_->row_of_run(run_id);
  if (src < 0) {
    pending_select_ = run_id;  // not loaded yet: select after the next reload
    return;
  }
  pending_select_ = 0;
  const QModelIndex proxy = filter_->mapFromSource(runs_->index(src, 0));
  if (!proxy.isValid()) return;
  // Already the current row (e.g. selected when the run finished): setCurrentIndex would not
  // signal, yet the caller asked for the run to be shown (and run_shown to follow).
  if (table_->currentIndex().row() == proxy.row()) show_run(proxy);
  else table_->setCurrentIndex(proxy);
}

void RunsPanel::show_run(const QModelIndex& proxy_index) {
  const RunRow* row = runs_->row_at(filter_->mapToSource(proxy_index).row());
  if (!row) return;
  const RunRecord run = row->run;
  diff_view_->set_run_a(run);
  show_sweep(stored_sweep_points(runs_->rows(), run));  // empty for a run of no sweep: the chart says so
  query_store<RunDetail>(
      wb_, this, tr("Reading run %1").arg(run.id),
      [run](Store& s) {
        RunDetail d;
        d.run = run;
        d.samples = s.samples(run.id);
        d.passport = stored_passport(s, run.passport_id);
        return d;
      },
      [this](RunDetail d) {
        samples_->set_samples(d.samples);
        QVector<KeyValueModel::Row> rows;
        rows << KeyValueModel::Row{"config", QString::fromStdString(d.run.config)}
             << KeyValueModel::Row{"git revision", QString::fromStdString(d.run.git_revision)}
             << KeyValueModel::Row{"started", QString::fromStdString(d.run.started_at)}
             << KeyValueModel::Row{"finished", QString::fromStdString(d.run.finished_at)};
        if (!d.run.error.empty()) rows << KeyValueModel::Row{"error", QString::fromStdString(d.run.error)};
        for (const auto& [prefix, text] : {std::pair{"options", d.run.options_json}, std::pair{"params", d.run.params_json},
                                           std::pair{"summary", d.run.summary_json}}) {
          const auto j = nlohmann::json::parse(text.empty() ? "{}" : text, nullptr, false);
          if (!j.is_discarded()) flatten(j, prefix, &rows);
        }
        details_->set_rows(rows);
        const auto summary = nlohmann::json::parse(d.run.summary_json.empty() ? "{}" : d.run.summary_json, nullptr, false);
        gpu_->set_rows(gpu_energy_rows(summary.is_discarded() ? nlohmann::json::object() : summary));
        if (d.passport) passport_->set_passport(*d.passport);
        else passport_->clear();
        for (QTableView* t : detail_tabs_->findChildren<QTableView*>()) t->resizeColumnsToContents();
        Q_EMIT run_shown(d.run.id);
      });
}

void RunsPanel::begin_session(Job* job) {
  session_ = job;
  hint_shown_ = false;
  start_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  connect(job, &Job::progress, this, [this](double f, const QString& what) {
    progress_->setValue(static_cast<int>(f * 1000));
    progress_->setFormat(QString("%1 — %p%").arg(what));
  });
  connect(job, &Job::failed, this, [this](const QString& m) {
    result_->setText(tr("<b>Failed:</b> %1").arg(m.toHtmlEscaped()));
    Q_EMIT session_finished(0);
  });
  connect(job, &Job::cancelled, this, [this] {
    result_->setText(tr("Cancelled; nothing was stored."));
    Q_EMIT session_finished(0);
  });
  connect(job, &Job::finished, this, [this] {
    start_->setEnabled(true);
    cancel_->setEnabled(false);
    progress_->setFormat("%p%");
  });
  wb_.track(job);
}

void RunsPanel::cancel_session() {
  if (session_) session_->cancel();
}

void RunsPanel::show_sweep(const std::vector<DepthSweepPoint>& points) {
  fill_depth_chart(depth_view_->chart(), points);
}

void RunsPanel::start_decode_proxy() {
  if (session_) return;
  kind_->setCurrentIndex(0);
  if (!depths_->text().trimmed().isEmpty()) {
    try {
      start_depth_sweep(parse_depths(depths_->text().toStdString()));
    } catch (const Error& e) {
      hint_shown_ = false;
      result_->setText(tr("<b>Depths:</b> %1").arg(QString::fromStdString(e.what()).toHtmlEscaped()));
    }
    return;
  }
  LabRequest req{wb_.model_path().toStdString(), wb_.model(), config_->text().toStdString(),
                 wb_.store_path().toStdString(), label_->text().toStdString()};
  DecodeProxyParams params;
  params.decode_tokens = tokens_->value();
  params.prompt_tokens = prompt_->value();
  params.runs = reps_->value();
  params.warmup = warmup_->value();
  auto out = std::make_shared<DecodeProxyOutcome>();
  auto* job = new Job(tr("decode-proxy %1").arg(QFileInfo(wb_.model_path()).fileName()),
                      [req, params, out](const ProgressFn& progress, Job&) {
                        *out = run_decode_proxy_session(req, params, progress);
                      });
  connect(job, &Job::succeeded, this, [this, out] {
    const auto& r = out->result;
    result_->setText(tr("<b>decode-proxy</b> on %1 (%2): decode <b>%3 tok/s</b> [%4–%5], prefill %6 tok/s, "
                        "TTFT %7 ms, effective %8 GB/s%9. Stored as run %10.")
                         .arg(QString::fromStdString(out->backend), QString::fromStdString(out->device).toHtmlEscaped())
                         .arg(r.decode_tok_s.median, 0, 'f', 2)
                         .arg(r.decode_tok_s.min, 0, 'f', 2)
                         .arg(r.decode_tok_s.max, 0, 'f', 2)
                         .arg(r.prefill_tok_s.median, 0, 'f', 1)
                         .arg(r.ttft_ms.median, 0, 'f', 2)
                         .arg(r.effective_gbs.median, 0, 'f', 3)
                         .arg(r.measured_read_gbs > 0 ? tr(" (%1% of %2 GB/s measured)")
                                                            .arg(100 * r.bandwidth_share.median, 0, 'f', 1)
                                                            .arg(r.measured_read_gbs, 0, 'f', 1)
                                                      : QString())
                         .arg(out->run_id));
    if (!out->device.empty()) wb_.set_device(QString::fromStdString(out->device));
    pending_select_ = out->run_id;
    Q_EMIT wb_.store_written();
    Q_EMIT session_finished(out->run_id);
  });
  begin_session(job);
}

void RunsPanel::start_depth_sweep(const std::vector<int>& depths) {
  LabRequest req{wb_.model_path().toStdString(), wb_.model(), config_->text().toStdString(),
                 wb_.store_path().toStdString(), label_->text().toStdString()};
  DecodeProxyParams params;
  params.decode_tokens = tokens_->value();
  params.runs = reps_->value();
  params.warmup = warmup_->value();
  auto out = std::make_shared<DepthSweepOutcome>();
  auto* job = new Job(tr("depth sweep %1").arg(QFileInfo(wb_.model_path()).fileName()),
                      [req, params, depths, out](const ProgressFn& progress, Job&) {
                        *out = run_depth_sweep_session(req, params, depths, progress);
                      });
  connect(job, &Job::succeeded, this, [this, out] {
    std::vector<DepthSweepPoint> points;
    QStringList runs;
    for (const DepthPoint& p : out->points) {
      points.push_back(depth_sweep_point(p.depth, p.run_id, p.summary));
      runs << QString::number(p.run_id);
    }
    result_->setText(tr("<b>depth sweep</b> on %1 (%2): %3. Stored as runs %4.")
                         .arg(QString::fromStdString(out->backend), QString::fromStdString(out->device).toHtmlEscaped(),
                              describe_sweep(points).toHtmlEscaped(), runs.join(", ")));
    show_sweep(points);
    detail_tabs_->setCurrentWidget(depth_view_);
    if (!out->device.empty()) wb_.set_device(QString::fromStdString(out->device));
    const qint64 last = out->points.empty() ? 0 : out->points.back().run_id;
    pending_select_ = last;
    Q_EMIT wb_.store_written();
    Q_EMIT session_finished(last);
  });
  begin_session(job);
  // Connected after begin_session's handlers, so these words are the last: a sweep stores each
  // depth as it finishes, so a stop part-way keeps the depths before it.
  connect(job, &Job::cancelled, this, [this] {
    result_->setText(tr("Cancelled; the depths measured before were stored, one run each."));
    Q_EMIT wb_.store_written();
  });
  connect(job, &Job::failed, this, [this] {
    result_->setText(result_->text() + tr(" Depths measured before the failure, if any, were stored, one run each."));
    Q_EMIT wb_.store_written();
  });
}

void RunsPanel::start_timeline() {
  if (session_) return;
  kind_->setCurrentIndex(1);
  LabRequest req{wb_.model_path().toStdString(), wb_.model(), config_->text().toStdString(),
                 wb_.store_path().toStdString(), label_->text().toStdString()};
  TimelineParams params;
  params.decode_tokens = tokens_->value();
  params.prompt_tokens = prompt_->value();
  auto out = std::make_shared<TimelineOutcome>();
  auto* job = new Job(tr("timeline %1").arg(QFileInfo(wb_.model_path()).fileName()),
                      [req, params, out](const ProgressFn& progress, Job&) {
                        *out = run_timeline_session(req, params, progress);
                      });
  connect(job, &Job::succeeded, this, [this, out] {
    const auto& s = out->result.summary;
    result_->setText(tr("<b>timeline</b> on %1: %2 decode steps, %3 ms of spans per step (coverage %4%), "
                        "%5 dispatches per layer. Stored as run %6.")
                         .arg(QString::fromStdString(out->backend))
                         .arg(s.steps)
                         .arg(s.span_ms_per_step, 0, 'f', 3)
                         .arg(100 * out->result.coverage, 0, 'f', 1)
                         .arg(s.dispatches_per_layer, 0, 'f', 1)
                         .arg(out->run_id));
    pending_select_ = out->run_id;
    Q_EMIT wb_.store_written();
    Q_EMIT session_finished(out->run_id);
  });
  begin_session(job);
}

}  // namespace p64::ui
