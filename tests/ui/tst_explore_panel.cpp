// The Explore page: the heatmap model built from a hand-made matrix (headless: texts, colours by
// direction and significance, run ids, headers, summary), then a real two-cell explore on the CPU
// backend stored by the engine and read back by the panel, whose double-click opens a cell's run.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>

#include "engine/format/convert.h"
#include "engine/lab/explore.h"
#include "ui/core/workbench.h"
#include "ui/models/explore_matrix_model.h"
#include "ui/panels/explore_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

p64::ExploreCell cell(size_t model, size_t set, double ratio, double p, p64::Verdict v, int64_t run, bool busy = false) {
  p64::ExploreCell c;
  c.model_index = model;
  c.set_index = set;
  c.run_id = run;
  c.p_value = p;
  c.busy = busy;
  c.comparison.ratio_median = ratio;
  c.comparison.ratio_min = ratio - 0.01;
  c.comparison.ratio_max = ratio + 0.01;
  c.comparison.a_median = 100;
  c.comparison.b_median = 100 * ratio;
  c.comparison.verdict = v;
  c.comparison.quality_pass = v != p64::Verdict::Rejected;
  c.comparison.reason = "by the rule";
  return c;
}

// 2 models x 2 sets with three cells: a significant win, a significant regression on a busy
// machine, an insignificant change; cell (1, 1) not measured.
p64::ExploreMatrix hand_made() {
  p64::ExploreMatrix m;
  m.name = "x-test";
  m.plan.models = {"/models/a/first.p64", "/models/b/second.p64"};
  m.plan.baseline = "backend=cpu";
  m.plan.sets = {"opt.kv_f16=1", "opt.isa=avx2"};
  m.cells = {cell(0, 0, 1.08, 0.01, p64::Verdict::Win, 11), cell(0, 1, 0.90, 0.02, p64::Verdict::Rejected, 12, true),
             cell(1, 0, 1.005, 0.6, p64::Verdict::Inconclusive, 13)};
  return m;
}

}  // namespace

class TestExplorePanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void model_shows_ratio_verdict_and_significance() {
    ExploreMatrixModel m;
    m.set_matrix(hand_made());
    QCOMPARE(m.rowCount(), 2);
    QCOMPARE(m.columnCount(), 2);
    QCOMPARE(m.index(0, 0).data().toString(), QString("1.080* win"));
    QCOMPARE(m.index(0, 1).data().toString(), QString("0.900* rejected !"));
    QCOMPARE(m.index(1, 0).data().toString(), QString("1.005 inconclusive"));
    QCOMPARE(m.index(1, 1).data().toString(), QString("not measured"));
    QCOMPARE(m.index(0, 1).data(ExploreMatrixModel::kRunIdRole).toLongLong(), 12);
    QCOMPARE(m.index(1, 1).data(ExploreMatrixModel::kRunIdRole).toLongLong(), 0);
    const QString tip = m.index(0, 1).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("opt.isa=avx2") && tip.contains("first.p64") && tip.contains("busy") &&
                 tip.contains("run 12") && tip.contains("(significant)") && tip.contains("FAIL"),
             qPrintable(tip));
    QVERIFY(m.index(1, 0).data(Qt::ToolTipRole).toString().contains("not significant"));
    QCOMPARE(m.headerData(0, Qt::Vertical, Qt::DisplayRole).toString(), QString("first.p64"));
    QCOMPARE(m.headerData(1, Qt::Vertical, Qt::ToolTipRole).toString(), QString("/models/b/second.p64"));
    QCOMPARE(m.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), QString("[2] opt.isa=avx2"));
    QVERIFY(m.headerData(0, Qt::Horizontal, Qt::ToolTipRole).toString().contains("backend=cpu"));
    QCOMPARE(m.summary(), QString("3 of 4 cells measured: 1 win(s), 1 rejected, 1 inconclusive"));
  }

  void colours_follow_direction_size_and_significance() {
    ExploreMatrixModel m;
    m.set_matrix(hand_made());
    const QColor win = m.index(0, 0).data(Qt::BackgroundRole).value<QColor>();
    const QColor loss = m.index(0, 1).data(Qt::BackgroundRole).value<QColor>();
    const QColor flat = m.index(1, 0).data(Qt::BackgroundRole).value<QColor>();
    const QColor empty = m.index(1, 1).data(Qt::BackgroundRole).value<QColor>();
    QVERIFY(win.green() > win.red() + 60);
    QVERIFY(loss.red() > loss.green() + 60);
    // half a percent, not significant: nearly white
    QVERIFY(flat.red() > 220 && flat.green() > 220 && flat.blue() > 220);
    QCOMPARE(empty, QColor(230, 230, 230));
    // the same change without significance is paler (further from the full colour)
    p64::ExploreCell strong = cell(0, 0, 1.08, 0.01, p64::Verdict::Win, 1);
    p64::ExploreCell weak = cell(0, 0, 1.08, 0.5, p64::Verdict::Inconclusive, 1);
    QVERIFY(ExploreMatrixModel::cell_color(weak).red() > ExploreMatrixModel::cell_color(strong).red());
  }

  // A real explore on the CPU (two model rows, one set, two runs a side) stored by the engine,
  // then shown by the panel; a double-click asks the workbench for the cell's A/B run.
  void panel_reads_a_stored_explore() {
    const QString db = dir_.filePath("lab.db");
    const QString a = dir_.filePath("stories.p64"), b = dir_.filePath("stories-copy.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), a.toStdString(), {});
    QVERIFY(QFile::copy(a, b));
    p64::ExplorePlan plan;
    plan.models = {a.toStdString(), b.toStdString()};
    plan.baseline = "backend=cpu";
    plan.sets = {"opt.kv_f16=1"};
    plan.runs = 2;
    plan.warmup = 0;
    plan.tokens = 4;
    plan.prompt_tokens = 4;
    plan.quality_tokens = 8;
    p64::ExploreOptions options;
    options.store_path = db.toStdString();
    const p64::ExploreOutcome out = p64::run_explore(plan, options);
    QCOMPARE(out.cells_run, size_t{2});

    Workbench wb;
    wb.set_store_path(db);
    ExplorePanel panel(wb);
    QVERIFY(test::wait_until([&] { return panel.explore_box()->count() == 1 && panel.model()->rowCount() == 2; }));
    QCOMPARE(panel.model()->columnCount(), 1);
    QVERIFY(panel.explore_box()->currentText().startsWith(QString::fromStdString(out.matrix.name)));
    QVERIFY2(panel.summary_label()->text().startsWith("2 of 2 cells measured"), qPrintable(panel.summary_label()->text()));
    for (int r = 0; r < 2; ++r) {
      const QString text = panel.model()->index(r, 0).data().toString();
      QVERIFY2(!text.contains("not measured"), qPrintable(text));
    }
    QSignalSpy opened(&wb, &Workbench::run_requested);
    const QModelIndex second = panel.model()->index(1, 0);
    Q_EMIT panel.table()->doubleClicked(second);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened.first().first().toLongLong(), second.data(ExploreMatrixModel::kRunIdRole).toLongLong());
    QCOMPARE(opened.first().first().toLongLong(), out.matrix.cell(1, 0)->run_id);
  }

  void panel_without_explores_says_how_to_make_one() {
    QTemporaryDir empty;
    Workbench wb;
    wb.set_store_path(empty.filePath("lab.db"));
    ExplorePanel panel(wb);
    QSignalSpy done(&panel, &ExplorePanel::reloaded);
    QVERIFY(test::wait_until([&] { return done.count() > 0; }));
    QCOMPARE(panel.explore_box()->count(), 0);
    QCOMPARE(panel.model()->rowCount(), 0);
  }
};

QTEST_MAIN(TestExplorePanel)
#include "tst_explore_panel.moc"
