// The Runs page's diff tab: the diff model built from a hand-made diff (headless: row kinds,
// numbers, ops one run lacks, colours), then two stored timeline runs diffed from the panel by
// choosing run B, an A/B run diffed side by side on selection, and a run without ops refused
// with the engine's reason.
#include <QtTest>

#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>

#include "engine/lab/store.h"
#include "support/op_spans.h"
#include "ui/core/workbench.h"
#include "ui/models/run_diff_model.h"
#include "ui/panels/run_diff_view.h"
#include "ui/panels/runs_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

p64::OpDelta op(const char* name, const char* group, double a, double b, bool in_a = true, bool in_b = true) {
  p64::OpDelta o;
  o.name = name;
  o.group = group;
  o.a_ms = a;
  o.b_ms = b;
  o.in_a = in_a;
  o.in_b = in_b;
  return o;
}

p64::RunDiff hand_made() {
  p64::RunDiff d;
  d.a_label = "run 1 (timeline, cpu)";
  d.b_label = "run 2 (timeline, cpu)";
  d.figures = {{"decode tok/s", 100, 110}};
  d.groups = {op("ATTN", "", 1.0, 0.8)};
  d.total = op("all ops", "", 1.5, 1.2);
  d.ops = {op("sdpa", "ATTN", 1.0, 0.8), op("combine", "ATTN", 0.5, 0, true, false)};
  return d;
}

// A timeline run with two decode steps of one layer: qkv `qkv_us` and sdpa 10 us a step.
int64_t timeline_run(p64::Store& store, double qkv_us, double tok_s) {
  p64::RunBundle b;
  b.run.kind = p64::RunKind::Timeline;
  b.run.backend = "cpu";
  for (int step = 0; step < 2; ++step) {
    b.ops.push_back(p64::test::op_span("qkv", p64::OpGroup::Attn, 0, step, 0, qkv_us));
    b.ops.push_back(p64::test::op_span("sdpa", p64::OpGroup::Attn, 0, step, 0, 10));
  }
  p64::SampleRecord s;
  s.decode_tok_s = tok_s;
  b.samples.push_back(s);
  return store.write_run(std::move(b));
}

}  // namespace

class TestRunDiff : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void model_rows_figures_groups_total_ops() {
    RunDiffModel m;
    m.set_diff(hand_made());
    QCOMPARE(m.rowCount(), 5);
    QCOMPARE(m.kind_of(0), RunDiffModel::RowKind::Figure);
    QCOMPARE(m.kind_of(1), RunDiffModel::RowKind::Group);
    QCOMPARE(m.kind_of(2), RunDiffModel::RowKind::Total);
    QCOMPARE(m.kind_of(3), RunDiffModel::RowKind::Op);
    QCOMPARE(m.index(0, RunDiffModel::kRatio).data().toString(), QString("1.100"));
    QCOMPARE(m.index(1, RunDiffModel::kName).data().toString(), QString("ATTN"));
    QCOMPARE(m.index(3, RunDiffModel::kName).data().toString(), QString("  sdpa (ATTN)"));
    QCOMPARE(m.index(3, RunDiffModel::kDelta).data().toString(), QString("-0.2000"));
    QCOMPARE(m.index(3, RunDiffModel::kRatio).data().toString(), QString("0.800"));
    // B is 20% faster on sdpa: its delta is green; combine is missing in B: dashes and a tooltip
    QCOMPARE(m.index(3, RunDiffModel::kDelta).data(Qt::ForegroundRole).value<QColor>(), QColor(26, 127, 55));
    QCOMPARE(m.index(4, RunDiffModel::kB).data().toString(), QString("-"));
    QCOMPARE(m.index(4, RunDiffModel::kRatio).data().toString(), QString("-"));
    QVERIFY(m.index(4, RunDiffModel::kB).data(Qt::ToolTipRole).toString().contains("Run B has no combine"));
    QVERIFY(m.headerData(RunDiffModel::kA, Qt::Horizontal, Qt::DisplayRole).toString().contains("run 1"));
    m.clear();
    QCOMPARE(m.rowCount(), 0);
  }

  void panel_diffs_two_timeline_runs_and_refuses_a_run_without_ops() {
    const QString db = dir_.filePath("lab.db");
    int64_t a = 0, b = 0, plain = 0;
    {
      p64::Store::Options o;
      o.import_plan_history = false;
      auto store = p64::Store::open(db.toStdString(), o);
      a = timeline_run(*store, 20, 100);
      b = timeline_run(*store, 10, 125);
      p64::RunBundle dp;
      dp.run.kind = p64::RunKind::DecodeProxy;
      dp.run.backend = "cpu";
      plain = store->write_run(std::move(dp));
    }
    Workbench wb;
    wb.set_store_path(db);
    RunsPanel panel(wb);
    QSignalSpy shown(&panel, &RunsPanel::run_shown);
    panel.select_run(a);
    QVERIFY(test::wait_until([&] { return shown.count() > 0; }));
    RunDiffView* view = panel.diff_view();
    QVERIFY(view->diff_button()->isEnabled());
    QSignalSpy diffed(view, &RunDiffView::diffed);
    view->run_b_box()->setValue(static_cast<int>(b));
    view->diff_button()->click();
    QVERIFY(test::wait_until([&] { return diffed.count() > 0; }));
    const RunDiffModel* m = view->model();
    int qkv = -1;
    for (int r = 0; r < m->rowCount(); ++r)
      if (m->index(r, RunDiffModel::kName).data().toString().contains("qkv")) qkv = r;
    QVERIFY(qkv >= 0);
    QCOMPARE(m->index(qkv, RunDiffModel::kRatio).data().toString(), QString("0.500"));  // 10 us against 20
    QCOMPARE(m->index(0, RunDiffModel::kName).data().toString(), QString("decode tok/s"));
    QCOMPARE(m->index(0, RunDiffModel::kRatio).data().toString(), QString("1.250"));

    view->run_b_box()->setValue(static_cast<int>(plain));
    view->diff_button()->click();
    QVERIFY(test::wait_until([&] { return diffed.count() > 1; }));
    QCOMPARE(view->model()->rowCount(), 0);
    QVERIFY2(view->note_label()->text().contains(QString::number(plain)), qPrintable(view->note_label()->text()));
  }
};

QTEST_MAIN(TestRunDiff)
#include "tst_run_diff.moc"
