#include "ui/panels/scoreboard_panel.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QValueAxis>
#include <QVBoxLayout>

#include "ui/core/theme.h"
#include "ui/core/workbench.h"
#include "ui/charts/chart_export.h"
#include "ui/core/store_job.h"
#include "ui/models/json_table_model.h"
#include "ui/models/report_export.h"
#include "ui/panels/table_view.h"

namespace p64::ui {

namespace {

QLabel* heading(const QString& text, QWidget* parent) {
  auto* l = new QLabel(QString("<b>%1</b>").arg(text), parent);
  return l;
}

// Each bar's value as a share of its threshold (capped at 150%), green when met.
void fill_bars_chart(QChart* chart, const nlohmann::json& bars) {
  chart->removeAllSeries();
  for (QAbstractAxis* a : chart->axes()) chart->removeAxis(a);
  style_chart(chart);
  chart->setTitle(QObject::tr("G0–G5: value as % of the bar"));
  auto* met = new QBarSet(QObject::tr("met"));
  auto* not_met = new QBarSet(QObject::tr("not met"));
  met->setColor(QColor(0x2e, 0x9d, 0x4a));
  not_met->setColor(QColor(0xd0, 0x3a, 0x3a));
  QStringList categories;
  // Category axes run bottom-up; listed in reverse so G0 is on top, as in the table.
  for (auto it = bars.rbegin(); it != bars.rend(); ++it) {
    const auto& b = *it;
    const double t = b.value("threshold", 0.0), v = b.value("value", 0.0);
    const bool pass = b.value("pass", false);
    const double pct = t > 0 ? std::min(150.0, 100 * v / t) : (pass ? 100.0 : 0.0);
    *met << (pass ? pct : 0.0);
    *not_met << (pass ? 0.0 : pct);
    categories << QString::fromStdString(b.value("bar", ""));
  }
  auto* series = new QHorizontalStackedBarSeries;
  series->append(met);
  series->append(not_met);
  series->setBarWidth(0.6);
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(categories);
  auto* x = new QValueAxis;
  x->setRange(0, 150);
  x->setTickCount(4);
  x->setLabelFormat("%d%%");
  chart->addAxis(y, Qt::AlignLeft);
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(y);
  series->attachAxis(x);
  chart->legend()->setAlignment(Qt::AlignBottom);
}
}  // namespace

ScoreboardPanel::ScoreboardPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  scoreboard_ = make_scoreboard_model(this);
  bars_ = make_bars_model(this);
  peers_ = make_peers_model(this);

  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Model filter (part of the path or name; empty = every model)"));
  filter_->setClearButtonEnabled(true);
  auto* refresh = new QPushButton(tr("Refresh"), this);
  export_ = new QPushButton(tr("Export…"), this);
  export_->setToolTip(tr("The report as Markdown, HTML, CSV, JSON or PDF; the bars chart as PNG or SVG"));
  summary_ = new QLabel(this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_, 1);
  bar->addWidget(refresh);
  bar->addWidget(export_);

  scoreboard_table_ = make_table(scoreboard_, this);
  bars_table_ = make_table(bars_, this);
  peers_table_ = make_table(peers_, this);
  for (QTableView* t : {scoreboard_table_, bars_table_, peers_table_})
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 8);  // the status glyphs need it
  bars_chart_ = new QChartView(new QChart, this);
  bars_chart_->setRenderHint(QPainter::Antialiasing);
  bars_chart_->setMinimumWidth(320);

  auto* top = new QWidget(this);
  auto* tl = new QVBoxLayout(top);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(heading(tr("Scoreboard (decode-proxy runs)"), top));
  tl->addWidget(scoreboard_table_);
  auto* bars_box = new QWidget(this);
  auto* bl = new QVBoxLayout(bars_box);
  bl->setContentsMargins(0, 0, 0, 0);
  bl->addWidget(heading(tr("Bars, on the latest run"), bars_box));
  bl->addWidget(bars_table_);
  auto* peers_box = new QWidget(this);
  auto* pl = new QVBoxLayout(peers_box);
  pl->setContentsMargins(0, 0, 0, 0);
  pl->addWidget(heading(tr("Peer diagnostics (llama-bench; not our runtime)"), peers_box));
  pl->addWidget(peers_table_);
  auto* tables = new QSplitter(Qt::Vertical, this);
  tables->addWidget(bars_box);
  tables->addWidget(peers_box);
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(tables);
  bottom->addWidget(bars_chart_);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);

  connect(refresh, &QPushButton::clicked, this, &ScoreboardPanel::reload);
  connect(filter_, &QLineEdit::returnPressed, this, &ScoreboardPanel::reload);
  auto* export_menu = new QMenu(export_);
  export_menu->addAction(tr("Report (Markdown, HTML, CSV, JSON, PDF)…"), this, [this] { export_dialog(); });
  export_menu->addAction(tr("Bars Chart as PNG…"), this, [this] { export_dialog("png"); });
  export_menu->addAction(tr("Bars Chart as SVG…"), this, [this] { export_dialog("svg"); });
  export_->setMenu(export_menu);
  connect(&wb_, &Workbench::store_written, this, &ScoreboardPanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &ScoreboardPanel::reload);
  fill_bars_chart(bars_chart_->chart(), nlohmann::json::array());
  reload();
}

void ScoreboardPanel::reload() {
  load_report(
      wb_, this, filter_->text(), [this](nlohmann::json rep) { show_report(std::move(rep)); },
      [this](const QString& m) { summary_->setText(tr("The store could not be read: %1").arg(m)); });
}

void ScoreboardPanel::show_report(nlohmann::json rep) {
  report_ = std::move(rep);
  scoreboard_->set_rows(report_.value("scoreboard", nlohmann::json::array()));
  bars_->set_rows(report_.value("bars", nlohmann::json::array()));
  peers_->set_rows(report_.value("peer_diagnostics", nlohmann::json::array()));
  fill_bars_chart(bars_chart_->chart(), report_.value("bars", nlohmann::json::array()));
  for (QTableView* t : {scoreboard_table_, bars_table_, peers_table_}) t->resizeColumnsToContents();
  scoreboard_table_->setColumnWidth(1, std::min(320, scoreboard_table_->columnWidth(1)));
  int met = 0;
  for (int r = 0; r < bars_->rowCount(); ++r) met += bars_->row(r).value("pass", false) ? 1 : 0;
  const auto on = report_.value("bars_evaluated_on_run", nlohmann::json());
  summary_->setText(tr("%1 runs, %2 peer diagnostics; %3 of %4 bars met%5. Generated %6.")
                        .arg(scoreboard_->rowCount())
                        .arg(peers_->rowCount())
                        .arg(met)
                        .arg(bars_->rowCount())
                        .arg(on.is_number() ? tr(" on run #%1").arg(on.get<qint64>()) : QString())
                        .arg(QString::fromStdString(report_.value("generated_at", ""))));
  Q_EMIT reloaded();
}

bool ScoreboardPanel::export_to(const QString& path) {
  try {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "png" || suffix == "svg") {
      if (suffix == "png") save_chart_png(bars_chart_, path);
      else save_chart_svg(bars_chart_, path, bars_chart_->chart()->title());
      Q_EMIT wb_.message(tr("Bars chart written to %1").arg(path));
      return true;
    }
    export_report(report_, path);
    Q_EMIT wb_.message(tr("Report written to %1").arg(path));
    return true;
  } catch (const std::exception& e) {
    Q_EMIT wb_.message(QString::fromUtf8(e.what()));
    summary_->setText(QString::fromUtf8(e.what()));
    return false;
  }
}

void ScoreboardPanel::export_dialog(const QString& chart_format) {
  const QString path =
      chart_format.isEmpty()
          ? QFileDialog::getSaveFileName(this, tr("Export the scoreboard"), "p64-report.md",
                                         tr("Markdown (*.md);;HTML (*.html);;CSV (*.csv);;JSON (*.json);;PDF (*.pdf)"))
          : QFileDialog::getSaveFileName(this, tr("Export the bars chart"), "p64-bars." + chart_format,
                                         QString("%1 (*.%2)").arg(chart_format.toUpper(), chart_format));
  if (!path.isEmpty()) export_to(path);
}

}  // namespace p64::ui
