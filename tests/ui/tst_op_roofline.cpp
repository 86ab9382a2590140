// The Timeline page's per-op roofline: the model from a summarized timeline (headless: only the
// ops whose bytes are counted, GB/s from bytes and time, the share of the ceiling, low shares
// red; GFLOP/s, FLOP per byte and the share of the compute ceiling where FLOPs are counted), the
// charts (each bar as long as the ceiling; each op with FLOPs a point under its device's roof),
// then the panel over a stored timeline run whose passport gives both ceilings.
#include <QtTest>

#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHorizontalStackedBarSeries>
#include <QLineSeries>
#include <QScatterSeries>

#include "engine/lab/store.h"
#include "engine/lab/timeline_run.h"
#include "support/op_spans.h"
#include "support/store_checks.h"
#include "ui/core/workbench.h"
#include "ui/charts/compute_roofline_chart.h"
#include "ui/charts/op_roofline_chart.h"
#include "ui/models/op_roofline_model.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;
using p64::OpGroup;
using p64::OpSpan;
using p64::test::op_span;

namespace {

// Two decode steps of two layers: qkv 20 us, 2 MB and 4 MFLOP a span, gate_up 40 us and 8 MB
// (400 us in layer 1 of the second step), rms 5 us uncounted, logits 30 us and 1 MB once a step.
std::vector<OpSpan> two_steps() {
  std::vector<OpSpan> s;
  for (int step = 4; step <= 5; ++step) {
    for (int layer = 0; layer < 2; ++layer) {
      s.push_back(op_span("rms_attn", OpGroup::Rms, layer, step, 0, 5));
      s.push_back(op_span("qkv", OpGroup::Attn, layer, step, 0, 20, 2'000'000));
      s.back().flops = 4e6;
      s.push_back(op_span("gate_up", OpGroup::Ffn, layer, step, 0, step == 5 && layer == 1 ? 400 : 40, 8'000'000));
    }
    s.push_back(op_span("logits", OpGroup::Logits, -1, step, 0, 30, 1'000'000));
  }
  return s;
}

}  // namespace

class TestOpRoofline : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void model_counts_bytes_over_time_against_the_ceiling() {
    OpRooflineModel m;
    m.set_ops(p64::summarize_timeline(two_steps()).top_ops, 1000);
    QCOMPARE(m.rowCount(), 3);  // rms_attn moves no counted bytes
    QCOMPARE(m.index(0, OpRooflineModel::kOp).data().toString(), QString("gate_up"));
    // gate_up: 16 MB a step in (80 + 440) / 2 us = 0.26 ms
    QCOMPARE(m.index(0, OpRooflineModel::kMb).data().toString(), QString("16.00"));
    QCOMPARE(m.index(0, OpRooflineModel::kGbs).data().toString(), QString("61.5"));
    // qkv: 4 MB in 0.04 ms = 100 GB/s, 10% of 1000: red
    QCOMPARE(m.index(1, OpRooflineModel::kOp).data().toString(), QString("qkv"));
    QCOMPARE(m.index(1, OpRooflineModel::kGbs).data().toString(), QString("100.0"));
    QCOMPARE(m.index(1, OpRooflineModel::kShare).data().toString(), QString("10.0%"));
    QCOMPARE(m.index(1, OpRooflineModel::kShare).data(Qt::ForegroundRole).value<QColor>(), QColor(207, 34, 46));
    QCOMPARE(m.headerData(OpRooflineModel::kShare, Qt::Horizontal, Qt::DisplayRole).toString(), QString("of 1000 GB/s"));
    m.set_ops(p64::summarize_timeline(two_steps()).top_ops, 0);
    QCOMPARE(m.index(1, OpRooflineModel::kShare).data().toString(), QString("—"));
  }

  void model_gives_flop_rates_against_the_compute_ceiling() {
    OpRooflineModel m;
    m.set_ops(p64::summarize_timeline(two_steps()).top_ops, 1000, {4e12, "passport: cuda device figures"});
    // qkv: 8 MFLOP a step in 0.04 ms = 200 GFLOP/s, 2 FLOP per byte, 5% of 4 TFLOP/s
    QCOMPARE(m.index(1, OpRooflineModel::kGflops).data().toString(), QString("200.0"));
    QCOMPARE(m.index(1, OpRooflineModel::kIntensity).data().toString(), QString("2.00"));
    QCOMPARE(m.index(1, OpRooflineModel::kPeakShare).data().toString(), QString("5.00%"));
    QCOMPARE(m.headerData(OpRooflineModel::kPeakShare, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("of 4.0 TFLOP/s"));
    QCOMPARE(m.ceiling_flops_kind(), QString("passport"));
    // gate_up has bytes but no FLOP count: no rate, no share
    QCOMPARE(m.index(0, OpRooflineModel::kGflops).data().toString(), QString("—"));
    QCOMPARE(m.index(0, OpRooflineModel::kPeakShare).data().toString(), QString("—"));
    m.set_ops(p64::summarize_timeline(two_steps()).top_ops, 1000);
    QCOMPARE(m.index(1, OpRooflineModel::kGflops).data().toString(), QString("200.0"));
    QCOMPARE(m.index(1, OpRooflineModel::kPeakShare).data().toString(), QString("—"));
    QCOMPARE(m.ceiling_flops_kind(), QString("none"));
  }

  void compute_chart_places_each_counted_op_under_the_roof() {
    OpRooflineModel m;
    m.set_ops(p64::summarize_timeline(two_steps()).top_ops, 1000, {4e12, "passport: cuda device figures"});
    QChart chart;
    fill_op_compute_roofline_chart(&chart, m, "H100");
    const auto points = test::series_of<QScatterSeries>(&chart);
    QCOMPARE(points.size(), 1);  // qkv alone has FLOPs
    QCOMPARE(points[0]->name(), QString("qkv"));
    QCOMPARE(points[0]->at(0), QPointF(2.0, 200.0));
    const auto roofs = test::series_of<QLineSeries>(&chart);
    QCOMPARE(roofs.size(), 1);
    QVERIFY(roofs[0]->name().startsWith("H100: 1000 GB/s, ceiling 4.0 TFLOP/s"));
    // The ridge: 4000 GFLOP/s at 4 FLOP per byte.
    QCOMPARE(roofs[0]->at(1), QPointF(4.0, 4000.0));

    OpRooflineModel uncounted;
    std::vector<p64::OpTotal> ops = p64::summarize_timeline(two_steps()).top_ops;
    for (auto& o : ops) o.mflop = 0;
    uncounted.set_ops(ops, 1000);
    fill_op_compute_roofline_chart(&chart, uncounted, "H100");
    QVERIFY(test::series_of<QScatterSeries>(&chart).isEmpty());
    QVERIFY(chart.title().contains("no op with counted FLOPs"));
  }

  void chart_bars_reach_the_ceiling() {
    OpRooflineModel m;
    m.set_ops(p64::summarize_timeline(two_steps()).top_ops, 1000);
    QChart chart;
    fill_op_roofline_chart(&chart, m);
    const auto series = test::series_of<QHorizontalStackedBarSeries>(&chart);
    QCOMPARE(series.size(), 1);
    const QList<QBarSet*> sets = series[0]->barSets();
    QCOMPARE(sets.size(), 2);
    QCOMPARE(sets[0]->count(), 3);
    for (int i = 0; i < 3; ++i) QCOMPARE(sets[0]->at(i) + sets[1]->at(i), 1000.0);
    QCOMPARE(sets[0]->at(2), 61.538461538461533);  // the most time on top: gate_up last
  }

  void panel_shows_a_stored_run_with_its_passport_ceiling() {
    const QString db = dir_.filePath("lab.db");
    {
      auto store = p64::Store::open(db.toStdString(), p64::test::without_plan_history());
      p64::RunBundle b;
      b.run.kind = p64::RunKind::Timeline;
      b.run.backend = "cpu";
      b.ops = two_steps();
      p64::Passport p;
      p.device.backend = "cpu";
      p.measured.read_gbs = 500;
      p.device.peak_flops = 1e12;
      b.passport = p;
      store->write_run(std::move(b));
    }
    Workbench wb;
    wb.set_store_path(db);
    TimelinePanel panel(wb);
    QVERIFY(test::wait_until([&] { return panel.roofline()->rowCount() == 3; }));
    QCOMPARE(panel.roofline()->ceiling_gbs(), 500.0);
    QCOMPARE(panel.roofline()->index(1, OpRooflineModel::kShare).data().toString(), QString("20.0%"));
    QCOMPARE(panel.roofline()->ceiling_flops(), 1e12);
    QCOMPARE(panel.roofline()->index(1, OpRooflineModel::kPeakShare).data().toString(), QString("20.00%"));
    QCOMPARE(panel.chart_views().size(), 4);
    QCOMPARE(test::series_of<QScatterSeries>(panel.op_compute_view()->chart()).size(), 1);
  }
};

QTEST_MAIN(TestOpRoofline)
#include "tst_op_roofline.moc"
