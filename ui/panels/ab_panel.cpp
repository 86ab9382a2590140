#include "ui/panels/ab_panel.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/core/ab_session.h"
#include "ui/core/workbench.h"
#include "ui/charts/ab_chart.h"
#include "ui/core/job.h"
#include "ui/core/store_job.h"
#include "ui/models/gpu_energy_rows.h"
#include "ui/models/switch_choices.h"
#include "ui/panels/chart_export_actions.h"
#include "ui/panels/spin_box.h"

namespace p64::ui {

namespace {
QString side_figures(const AbSideView& s, bool with_model) {
  const QString what = with_model ? QString("%1 · %2").arg(s.config, QFileInfo(s.model).fileName()) : s.config;
  QString gpu = gpu_figures_text(s.gpu).toHtmlEscaped();
  if (s.gpu.throttled.value_or(false))
    gpu.replace(throttled_text(true), QString("<b style='color:#d03a3a'>%1</b>").arg(throttled_text(true)));
  return QObject::tr("%1 on %2: median <b>%3</b> tok/s [%4–%5] over %6 runs<br>%7")
      .arg(what.toHtmlEscaped(), s.device.toHtmlEscaped())
      .arg(s.median, 0, 'f', 2)
      .arg(s.min, 0, 'f', 2)
      .arg(s.max, 0, 'f', 2)
      .arg(s.tok_s.size())
      .arg(gpu);
}

struct LatestAb {
  std::optional<RunRecord> run;
  std::optional<ComparisonRecord> comparison;
};

QString verdict_color(Verdict v) {
  switch (v) {
    case Verdict::Promoted:
    case Verdict::Win: return "#2e9d4a";
    case Verdict::Rejected: return "#d03a3a";
    case Verdict::Inconclusive: return "#c08a1e";
  }
  return "#808080";
}
}  // namespace

AbPanel::AbPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  quality_ = new AbQualityModel(this);

  auto* sides = new QHBoxLayout;
  sides->addWidget(make_side(tr("A (baseline)"), &a_, "threads=2"));
  sides->addWidget(make_side(tr("B (candidate)"), &b_, "threads=2,opt.kv_f16=1"));

  model_ = new QLabel(this);
  model_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  runs_ = make_spin_box(2, 50, AbParams{}.runs, this);
  runs_->setToolTip(tr("Measured runs per side, interleaved A B A B …; at least 2, and 4 or more for the significance test to reach p < 0.05"));
  warmup_ = make_spin_box(0, 10, 1, this);
  tokens_ = make_spin_box(1, 4096, 32, this);
  prompt_ = make_spin_box(1, 4096, 32, this);
  quality_tokens_ = make_spin_box(2, 4096, 32, this);
  quality_tokens_->setToolTip(tr("Teacher-forced positions compared by the quality gates"));
  split_ = new QCheckBox(tr("Per-op split"), this);
  split_->setToolTip(tr("After the A/B, run a timeline of each side and show their per-op split (not stored)"));
  start_ = new QPushButton(QIcon(":/icons/ab.svg"), tr("Start A/B"), this);
  start_->setDefault(true);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  status_ = new QLabel(this);
  status_->setWordWrap(true);

  auto* params = new QHBoxLayout;
  params->addWidget(new QLabel(tr("Model:"), this));
  params->addWidget(model_, 1);
  for (auto [label, box] : {std::pair{tr("Runs:"), runs_}, std::pair{tr("Warm-up:"), warmup_},
                            std::pair{tr("Decode tokens:"), tokens_}, std::pair{tr("Prompt tokens:"), prompt_},
                            std::pair{tr("Quality tokens:"), quality_tokens_}}) {
    params->addWidget(new QLabel(label, this));
    params->addWidget(box);
  }
  auto* run_bar = new QHBoxLayout;
  run_bar->addWidget(split_);
  run_bar->addWidget(start_);
  run_bar->addWidget(cancel_);
  run_bar->addWidget(progress_, 1);

  // --- result ---
  chart_ = new QChartView(new QChart, this);
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumSize(360, 280);
  split_chart_ = new QChartView(new QChart, this);
  split_chart_->setRenderHint(QPainter::Antialiasing);
  split_chart_->setMinimumHeight(200);
  ratio_ = new QLabel(this);
  ratio_->setTextFormat(Qt::RichText);
  quality_table_ = new QTableView(this);
  quality_table_->setModel(quality_);
  quality_table_->verticalHeader()->hide();
  quality_table_->horizontalHeader()->setStretchLastSection(true);
  // As tall as its rows: the split chart below takes the room left, never the table's.
  quality_table_->verticalHeader()->setDefaultSectionSize(quality_table_->fontMetrics().height() + 8);
  quality_table_->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  quality_table_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  quality_table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // AdjustToContents kept room for one
  quality_table_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Minimum);
  quality_table_->setWordWrap(false);
  verdict_ = new QLabel(this);
  verdict_->setTextFormat(Qt::RichText);
  verdict_->setWordWrap(true);
  rule_ = new QLabel(this);
  rule_->setWordWrap(true);
  recorded_ = new QLabel(this);
  recorded_->setWordWrap(true);
  recorded_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  show_run_ = new QPushButton(tr("Show run"), this);
  show_history_ = new QPushButton(tr("Show in Optimisations"), this);
  show_run_->setEnabled(false);
  show_history_->setEnabled(false);
  auto* links = new QHBoxLayout;
  links->addWidget(show_run_);
  links->addWidget(show_history_);
  links->addStretch(1);
  links->addWidget(make_export_charts_button(this, wb_));

  auto* figures = new QWidget(this);
  auto* fl = new QVBoxLayout(figures);
  fl->setContentsMargins(0, 0, 0, 0);
  fl->addWidget(ratio_);
  fl->addWidget(quality_table_);
  fl->addWidget(verdict_);
  fl->addWidget(rule_);
  fl->addWidget(recorded_);
  fl->addLayout(links);
  fl->addWidget(split_chart_, 1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(chart_);
  split->addWidget(figures);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({560, 700});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(sides);
  layout->addLayout(params);
  layout->addLayout(run_bar);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(start_, &QPushButton::clicked, this, &AbPanel::start_ab);
  connect(cancel_, &QPushButton::clicked, this, &AbPanel::cancel_ab);
  connect(show_run_, &QPushButton::clicked, this, [this] { wb_.show_run(view_.run_id); });
  connect(show_history_, &QPushButton::clicked, this, [this] { wb_.show_panel("optimisations"); });
  connect(&wb_, &Workbench::model_changed, this, &AbPanel::update_start);
  for (const SideEditor* s : {&a_, &b_}) connect(s->model, &QLineEdit::textChanged, this, &AbPanel::update_start);
  update_start();
  show_view(view_);
  connect(&wb_, &Workbench::store_changed, this, &AbPanel::reload);
  reload();
}

void AbPanel::reload() {
  query_store<LatestAb>(
      wb_, this, tr("Reading the latest A/B"),
      [](Store& s) {
        LatestAb l;
        if (auto id = s.latest_run_id(RunKind::Ab)) {
          l.run = s.run(*id);
          l.comparison = s.comparison_for_run(*id);
        }
        return l;
      },
      [this](LatestAb l) {
        if (job_ || !l.run) {
          Q_EMIT reloaded();
          return;
        }
        try {
          show_view(ab_view_from_stored(*l.run));
          a_.model->setText(view_.two_models() ? view_.a.model : QString());
          b_.model->setText(view_.two_models() ? view_.b.model : QString());
          // The editors take the stored configurations, so Start repeats that comparison.
          for (auto [side, config] : {std::pair{&a_, view_.a.config}, std::pair{&b_, view_.b.config}}) {
            QStringList items = config.split(',', Qt::SkipEmptyParts);
            for (int i = 0; i < items.size(); ++i)
              if (items[i].startsWith("backend=")) {
                const int k = side->backend->findText(items.takeAt(i).mid(8));
                if (k >= 0) side->backend->setCurrentIndex(k);
                break;
              }
            side->options->setText(items.join(','));
          }
          recorded_->setText(l.comparison ? tr("Stored A/B run #%1 (comparison #%2, %3).")
                                                .arg(l.run->id)
                                                .arg(l.comparison->id)
                                                .arg(QString::fromStdString(l.comparison->created_at))
                                          : tr("Stored A/B run #%1.").arg(l.run->id));
          show_history_->setEnabled(!view_.switch_name.isEmpty());
        } catch (const std::exception& e) {
          status_->setText(QString::fromUtf8(e.what()));
        }
        Q_EMIT reloaded();
      });
}

void AbPanel::update_start() {
  model_->setText(wb_.model_path().isEmpty() ? tr("none — open a .p64 in Models")
                                             : QFileInfo(wb_.model_path()).fileName());
  start_->setEnabled(job_.isNull() && !model_a().isEmpty());
}

QString AbPanel::model_a() const {
  const QString own = a_.model->text().trimmed();
  return own.isEmpty() ? wb_.model_path() : own;
}

QString AbPanel::model_b() const {
  const QString own = b_.model->text().trimmed();
  return own.isEmpty() ? model_a() : own;
}

QWidget* AbPanel::make_side(const QString& name, SideEditor* side, const QString& options) {
  auto* box = new QGroupBox(name, this);
  side->model = new QLineEdit(box);
  side->model->setPlaceholderText(side == &a_ ? tr("the open model") : tr("A's model"));
  side->model->setToolTip(tr("A .p64 of its own for this side (e.g. another quantisation of the model); "
                             "both sides need one vocabulary"));
  side->model->setClearButtonEnabled(true);
  auto* browse = new QPushButton(tr("Browse…"), box);
  connect(browse, &QPushButton::clicked, this, [this, side] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Model for this side"), QFileInfo(wb_.model_path()).absolutePath(),
                                                   tr("P64 containers (*.p64)"));
    if (!p.isEmpty()) side->model->setText(p);
  });
  side->backend = new QComboBox(box);
  QStringList backends = wb_.available_backends();
  if (backends.isEmpty()) backends << "cpu";
  side->backend->addItems(backends);
  const int cpu = side->backend->findText("cpu");
  if (cpu >= 0) side->backend->setCurrentIndex(cpu);
  // One row for backend and model keeps the side boxes as short as before the model field.
  auto* backend_row = new QHBoxLayout;
  backend_row->addWidget(side->backend);
  backend_row->addWidget(new QLabel(tr("Model:"), box));
  backend_row->addWidget(side->model, 1);
  backend_row->addWidget(browse);
  side->options = new QLineEdit(options, box);
  side->options->setPlaceholderText(tr("opt.NAME=VALUE, threads=N, device=D"));
  side->options->setToolTip(tr("Configuration items after the backend, as `p64 ab --a/--b` takes them"));
  side->switches = new QComboBox(box);
  side->switches->setToolTip(tr("The backend's optimisation switches: picking one sets opt.NAME=VALUE"));
  side->figures = new QLabel(box);
  side->figures->setTextFormat(Qt::RichText);
  side->figures->setWordWrap(true);
  auto* form = new QFormLayout(box);
  form->addRow(tr("Backend:"), backend_row);
  form->addRow(tr("Options:"), side->options);
  form->addRow(tr("Add switch:"), side->switches);
  form->addRow(side->figures);
  fill_switches(side);
  connect(side->backend, &QComboBox::currentIndexChanged, this, [this, side] { fill_switches(side); });
  connect(side->switches, &QComboBox::activated, this, [side](int i) {
    const QStringList nv = side->switches->itemData(i).toStringList();
    if (nv.size() == 2) side->options->setText(with_switch(side->options->text(), nv[0], nv[1]));
    side->switches->setCurrentIndex(0);
  });
  return box;
}

void AbPanel::fill_switches(SideEditor* side) {
  side->switches->clear();
  side->switches->addItem(tr("choose a switch…"));
  try {
    for (const SwitchChoice& c : switch_choices(side->backend->currentText())) {
      side->switches->addItem(QString("%1=%2  (%3%4)").arg(c.name, c.value, c.status, c.is_default ? tr(", default") : QString()),
                              QStringList{c.name, c.value});
      side->switches->setItemData(side->switches->count() - 1, c.description, Qt::ToolTipRole);
    }
  } catch (const std::exception& e) {
    side->switches->addItem(tr("(no switches: %1)").arg(QString::fromUtf8(e.what())));
  }
}

QString AbPanel::with_switch(const QString& options, const QString& name, const QString& value) {
  QStringList items;
  for (const QString& item : options.split(',', Qt::SkipEmptyParts)) {
    const QString t = item.trimmed();
    if (!t.startsWith("opt." + name + "=")) items << t;
  }
  items << QString("opt.%1=%2").arg(name, value);
  return items.join(',');
}

QString AbPanel::config_a() const {
  return QString::fromStdString(compose_config(a_.backend->currentText().toStdString(), a_.options->text().toStdString()));
}
QString AbPanel::config_b() const {
  return QString::fromStdString(compose_config(b_.backend->currentText().toStdString(), b_.options->text().toStdString()));
}

void AbPanel::set_running(bool on) {
  start_->setEnabled(!on && !model_a().isEmpty());
  cancel_->setEnabled(on);
  for (const SideEditor* s : {&a_, &b_}) {
    s->model->setEnabled(!on);
    s->backend->setEnabled(!on);
    s->options->setEnabled(!on);
    s->switches->setEnabled(!on);
  }
  split_->setEnabled(!on);
  if (!on) progress_->setFormat("%p%");
}

void AbPanel::cancel_ab() {
  if (job_) job_->cancel();
}

void AbPanel::start_ab() {
  if (job_) return;
  if (model_a().isEmpty()) {
    status_->setText(tr("Open a model in the Models panel first (File › Open, Ctrl+O), or choose one for A."));
    return;
  }
  AbRequest req;
  req.model_path = model_a().toStdString();
  req.model = wb_.model();
  req.model_path_b = model_b().toStdString();
  req.config_a = config_a().toStdString();
  req.config_b = config_b().toStdString();
  req.store_path = wb_.store_path().toStdString();
  req.params.runs = runs_->value();
  req.params.warmup = warmup_->value();
  req.params.decode_tokens = tokens_->value();
  req.params.prompt_tokens = prompt_->value();
  req.params.quality_tokens = quality_tokens_->value();
  req.op_split = split_->isChecked();
  req.split_params.decode_tokens = tokens_->value();
  req.split_params.prompt_tokens = prompt_->value();
  auto out = std::make_shared<AbOutcome>();
  auto* job = new Job(model_a() == model_b() ? tr("A/B %1").arg(QFileInfo(model_a()).fileName())
                                            : tr("A/B %1 vs %2").arg(QFileInfo(model_a()).fileName(),
                                                                     QFileInfo(model_b()).fileName()),
                      [req, out](const ProgressFn& progress, Job&) { *out = run_ab_session(req, progress); });
  job_ = job;
  set_running(true);
  progress_->setValue(0);
  status_->setText(tr("Running A: %1  vs  B: %2 …").arg(config_a(), config_b()));
  connect(job, &Job::progress, this, [this](double f, const QString& what) {
    progress_->setValue(static_cast<int>(f * 1000));
    progress_->setFormat(QString("%1 — %p%").arg(what));
  });
  connect(job, &Job::succeeded, this, [this, out] {
    const AbOutcome& o = *out;
    AbView view = make_ab_view(o.result, o.stored.outcome, o.stored.previous, o.stored.run_id);
    if (!o.split_a.empty()) set_ab_split(&view, o.split_a, o.split_b);
    show_view(view);
    QString rec;
    if (o.comparison) {
      rec = tr("Recorded: A/B run #%1 with comparison #%2 (%3).")
                .arg(o.stored.run_id)
                .arg(o.comparison->id)
                .arg(QString::fromStdString(o.comparison->created_at));
      if (o.optimisation)
        rec += tr(" Optimisation history of %1 (%2): status now <b>%3</b>, %4 dated entries; the latest cites run #%5.")
                   .arg(QString::fromStdString(o.optimisation->name), QString::fromStdString(o.optimisation->backend),
                        QString::fromUtf8(to_string(o.optimisation->status).data()))
                   .arg(o.history.size())
                   .arg(o.history.empty() ? 0 : o.history.back().evidence_run_id);
      else if (!o.result.same_model())
        rec += tr(" Different models: no switch history entry.");
      else
        rec += tr(" No single switch differs between A and B, so no optimisation history entry was written.");
    } else {
      rec = tr("Not recorded: the harness returned no comparison for this run.");
    }
    recorded_->setText(rec);
    show_history_->setEnabled(o.optimisation.has_value());
    status_->setText(tr("Done."));
    Q_EMIT wb_.store_written();
    Q_EMIT ab_finished(o.stored.run_id);
  });
  connect(job, &Job::failed, this, [this](const QString& m) {
    status_->setText(tr("<b>A/B failed:</b> %1").arg(m.toHtmlEscaped()));
    Q_EMIT ab_finished(0);
  });
  connect(job, &Job::cancelled, this, [this] {
    status_->setText(tr("Cancelled; nothing was stored."));
    Q_EMIT ab_finished(0);
  });
  connect(job, &Job::finished, this, [this] { set_running(false); });
  wb_.track(job);
}

void AbPanel::show_view(const AbView& v) {
  view_ = v;
  fill_ab_chart(chart_->chart(), v);
  fill_ab_split_chart(split_chart_->chart(), v);
  quality_->set_rows(v.quality);
  quality_table_->resizeColumnsToContents();
  if (v.empty()) {
    ratio_->setText(tr("No A/B yet: set two configurations and press Start A/B (Run › A/B, Ctrl+B)."));
    verdict_->clear();
    rule_->clear();
    recorded_->clear();
    a_.figures->clear();
    b_.figures->clear();
    show_run_->setEnabled(false);
    return;
  }
  a_.figures->setText(side_figures(v.a, v.two_models()));
  b_.figures->setText(side_figures(v.b, v.two_models()));
  ratio_->setText(tr("<span style='font-size:14pt'>B/A <b>%1</b></span> [%2–%3 over interleaved pairs] (%4%5%)")
                      .arg(v.ratio_median, 0, 'f', 3)
                      .arg(v.ratio_min, 0, 'f', 3)
                      .arg(v.ratio_max, 0, 'f', 3)
                      .arg(v.ratio_median >= 1 ? "+" : "")
                      .arg(100 * (v.ratio_median - 1), 0, 'f', 1));
  verdict_->setText(tr("<span style='font-size:16pt; font-weight:bold; color:%1'>%2</span>&nbsp;&nbsp;%3<br>%4")
                        .arg(verdict_color(v.verdict), verdict_name(v.verdict), v.reason.toHtmlEscaped(),
                             tr("Switch judged: %1; previous verdict: %2")
                                 .arg(v.switch_name.isEmpty()
                                          ? (v.two_models() ? tr("none (A and B run different models)")
                                                            : tr("none (A and B differ in more than one)"))
                                          : v.switch_name,
                                      v.previous ? verdict_name(*v.previous) : tr("none"))));
  rule_->setText(tr("Rule: %1").arg(verdict_rule_text(v.verdict)));
  show_run_->setEnabled(v.run_id > 0);
}

}  // namespace p64::ui
