// The Timeline page's per-op bandwidth: the model from a summarized timeline (headless: only the
// ops whose bytes are counted, GB/s from bytes and time, the share of the ceiling, low shares
// red), the chart (each bar as long as the ceiling), then the panel over a stored timeline run
// whose passport measured the ceiling.
#include <QtTest>

#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>

#include "engine/lab/store.h"
#include "engine/lab/timeline_run.h"
#include "support/op_spans.h"
#include "support/store_checks.h"
#include "ui/core/workbench.h"
#include "ui/charts/op_roofline_chart.h"
#include "ui/models/op_roofline_model.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;
using p64::OpGroup;
using p64::OpSpan;
using p64::test::op_span;

namespace {

// Two decode steps of two layers: qkv 20 us and 2 MB a span, gate_up 40 us and 8 MB (400 us in
// layer 1 of the second step), rms 5 us uncounted, logits 30 us and 1 MB once a step.
std::vector<OpSpan> two_steps() {
  std::vector<OpSpan> s;
  for (int step = 4; step <= 5; ++step) {
    for (int layer = 0; layer < 2; ++layer) {
      s.push_back(op_span("rms_attn", OpGroup::Rms, layer, step, 0, 5));
      s.push_back(op_span("qkv", OpGroup::Attn, layer, step, 0, 20, 2'000'000));
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
      b.passport = p;
      store->write_run(std::move(b));
    }
    Workbench wb;
    wb.set_store_path(db);
    TimelinePanel panel(wb);
    QVERIFY(test::wait_until([&] { return panel.roofline()->rowCount() == 3; }));
    QCOMPARE(panel.roofline()->ceiling_gbs(), 500.0);
    QCOMPARE(panel.roofline()->index(1, OpRooflineModel::kShare).data().toString(), QString("20.0%"));
    QVERIFY(panel.chart_views().size() == 3);
  }
};

QTEST_MAIN(TestOpRoofline)
#include "tst_op_roofline.moc"
