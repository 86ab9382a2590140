#include "ui/panels/roofline_panel.h"

#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "ui/core/workbench.h"
#include "ui/charts/compute_roofline_chart.h"
#include "ui/charts/roofline_chart.h"
#include "ui/core/store_job.h"
#include "ui/models/roofline_model.h"
#include "ui/panels/chart_export_actions.h"

namespace p64::ui {

RooflinePanel::RooflinePanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  runs_ = new RooflineModel(this);
  chart_ = new QChartView(new QChart, this);
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(320);
  compute_chart_ = new QChartView(new QChart, this);
  compute_chart_->setRenderHint(QPainter::Antialiasing);
  table_ = new QTableView(this);
  table_->setModel(runs_);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setWordWrap(false);  // a long config elides on its row instead of wrapping out of sight
  g5_ = new QDoubleSpinBox(this);
  g5_->setRange(1, 100);
  g5_->setValue(40);
  g5_->setSuffix(tr("% of bandwidth"));
  g5_->setToolTip(tr("The plan's G5 bar: effective GB/s as a share of the measured read bandwidth"));
  summary_ = new QLabel(tr("Tick the decode-proxy runs to place on the roofline."), this);
  auto* refresh = new QPushButton(tr("Refresh"), this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(summary_, 1);
  bar->addWidget(new QLabel(tr("G5 line:"), this));
  bar->addWidget(g5_);
  bar->addWidget(refresh);
  bar->addWidget(make_export_charts_button(this, wb_));

  auto* charts = new QSplitter(Qt::Horizontal, this);
  charts->addWidget(chart_);
  charts->addWidget(compute_chart_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(charts);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({540, 160});
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split, 1);

  connect(runs_, &RooflineModel::chosen_changed, this, &RooflinePanel::redraw);
  connect(g5_, &QDoubleSpinBox::valueChanged, this, &RooflinePanel::redraw);
  connect(refresh, &QPushButton::clicked, this, &RooflinePanel::reload);
  connect(&wb_, &Workbench::store_written, this, &RooflinePanel::reload);
  connect(&wb_, &Workbench::store_changed, this, &RooflinePanel::reload);
  redraw();
  reload();
}

void RooflinePanel::reload() {
  query_store<std::vector<RooflinePoint>>(
      wb_, this, tr("Reading decode runs"),
      [](Store& s) {
        std::map<int64_t, ModelRecord> models;
        for (const auto& m : s.models()) models[m.id] = m;
        std::map<int64_t, std::optional<Passport>> passports;
        auto passport_of = [&](int64_t id) -> const Passport* {
          if (!passports.count(id)) {
            const auto rec = id ? s.passport(id) : std::nullopt;
            const auto j = nlohmann::json::parse(rec ? rec->json : "", nullptr, false);
            passports[id] = j.is_object() ? std::optional<Passport>(j.get<Passport>()) : std::nullopt;
          }
          return passports[id] ? &*passports[id] : nullptr;
        };
        RunFilter f;
        f.kind = RunKind::DecodeProxy;
        std::vector<RooflinePoint> out;
        for (const auto& r : s.runs(f)) {
          const auto m = models.find(r.model_id);
          const ModelRecord* model = m == models.end() ? nullptr : &m->second;
          if (auto p = roofline_point(r, model ? QString::fromStdString(model->name) : QString(), model,
                                      passport_of(r.passport_id)))
            out.push_back(*p);
        }
        return out;
      },
      [this](std::vector<RooflinePoint> points) {
        runs_->set_points(std::move(points));
        table_->resizeColumnsToContents();
        // Long configs would push the FLOP columns out of sight; the tooltip has the whole label.
        table_->setColumnWidth(RooflineModel::kRun, std::min(270, table_->columnWidth(RooflineModel::kRun)));
        Q_EMIT reloaded();
      },
      [this](const QString& m) { summary_->setText(tr("The store could not be read: %1").arg(m)); });
}

void RooflinePanel::redraw() {
  const auto chosen = runs_->chosen();
  fill_roofline_chart(chart_->chart(), chosen, g5_->value() / 100);
  fill_compute_roofline_chart(compute_chart_->chart(), chosen);
  int over = 0, ceilinged = 0;
  for (const auto& p : chosen) {
    if (p.measured_read_gbs <= 0) continue;
    ++ceilinged;
    over += p.share() >= g5_->value() / 100 ? 1 : 0;
  }
  summary_->setText(runs_->points().empty()
                        ? tr("No decode-proxy run with effective GB/s in the store yet: Run › Decode-proxy (Ctrl+R).")
                        : tr("%1 of %2 runs shown; %3 of the %4 with a measured bandwidth reach the G5 line.")
                              .arg(chosen.size())
                              .arg(runs_->points().size())
                              .arg(over)
                              .arg(ceilinged));
}

}  // namespace p64::ui
