// The Builds page: the compare model from a hand-made comparison (headless: texts, flag colours,
// headers naming the builds), then a store with runs of three builds: the newest against the one
// before by default, a regression flagged, the selected group's tok/s over all three builds
// charted; a store of one build says comparing needs two.
#include <QtTest>

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QLabel>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTableView>

#include "engine/lab/commit_compare.h"
#include "engine/lab/store.h"
#include "support/store_checks.h"
#include "ui/core/workbench.h"
#include "ui/models/commit_compare_model.h"
#include "ui/panels/builds_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

namespace {

p64::CommitCompareRow row(const char* model, double a, double b, const char* flag) {
  p64::CommitCompareRow r;
  r.model = model;
  r.backend = "cpu";
  r.config = "backend=cpu";
  r.prompt_tokens = 32;
  r.decode_tokens = 64;
  r.a_median = a;
  r.b_median = b;
  r.a_runs = 2;
  r.b_runs = 3;
  r.ratio = b / a;
  r.p_value = 0.004;
  r.flag = flag;
  r.reason = "Mann-Whitney U 0";
  return r;
}

// One decode-proxy run of `revision` on /m.p64 with five samples around `tok_s`.
void add_run(p64::Store& s, const char* revision, double tok_s) {
  p64::RunBundle b;
  b.run.kind = p64::RunKind::DecodeProxy;
  b.run.backend = "cpu";
  b.run.device = "test cpu";
  b.run.config = "backend=cpu";
  b.run.git_revision = revision;
  p64::ModelRecord m;
  m.path = "/m.p64";
  m.sha256 = std::string(64, 'a');
  m.name = "m";
  b.model = m;
  for (double d : {0.0, 0.5, -0.5, 1.0, -1.0}) {
    p64::SampleRecord r;
    r.decode_tok_s = tok_s + d;
    r.prompt_tokens = 32;
    r.decode_tokens = 64;
    b.samples.push_back(r);
  }
  s.write_run(std::move(b));
}


}  // namespace

class TestBuildsPanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void model_shows_each_group_with_its_flag() {
    p64::CommitCompare c;
    c.baseline = "aaaa1111bbbb";
    c.against = "cccc2222dddd";
    c.rows = {row("slow", 100, 90, "regression"), row("quick", 100, 110, "faster"), row("few", 100, 100, "too few runs")};
    CommitCompareModel m;
    m.set_compare(c);
    QCOMPARE(m.rowCount(), 3);
    QCOMPARE(m.index(0, CommitCompareModel::kRatio).data().toString(), QString("0.900"));
    QCOMPARE(m.index(0, CommitCompareModel::kA).data().toString(), QString("100.00 (2)"));
    QCOMPARE(m.index(0, CommitCompareModel::kTokens).data().toString(), QString("32+64"));
    QCOMPARE(m.index(0, CommitCompareModel::kFlag).data(Qt::ForegroundRole).value<QColor>(), QColor(207, 34, 46));
    QCOMPARE(m.index(1, CommitCompareModel::kFlag).data(Qt::ForegroundRole).value<QColor>(), QColor(26, 127, 55));
    QVERIFY(!m.index(2, CommitCompareModel::kFlag).data(Qt::ForegroundRole).isValid());
    QCOMPARE(m.index(2, CommitCompareModel::kP).data().toString(), QString("-"));
    QCOMPARE(m.headerData(CommitCompareModel::kA, Qt::Horizontal, Qt::DisplayRole).toString(), QString("aaaa1111 tok/s (runs)"));
    QVERIFY(m.index(0, CommitCompareModel::kFlag).data(Qt::ToolTipRole).toString().contains("Mann-Whitney"));
  }

  void panel_compares_the_newest_builds_and_charts_a_group() {
    const QString db = dir_.filePath("three.db");
    {
      auto s = p64::Store::open(db.toStdString(), p64::test::without_plan_history());
      add_run(*s, "111111111111", 100);
      add_run(*s, "222222222222", 101);
      add_run(*s, "222222222222", 100);
      add_run(*s, "333333333333", 80);
    }
    Workbench wb;
    wb.set_store_path(db);
    BuildsPanel panel(wb);
    QSignalSpy charted(&panel, &BuildsPanel::history_shown);
    QVERIFY(test::wait_until([&] { return panel.model()->rowCount() == 1; }));
    QCOMPARE(panel.baseline_box()->count(), 3);
    QCOMPARE(panel.baseline_box()->currentData().toString(), QString("222222222222"));
    QCOMPARE(panel.against_box()->currentData().toString(), QString("333333333333"));
    QCOMPARE(panel.model()->index(0, CommitCompareModel::kFlag).data().toString(), QString("regression"));
    QVERIFY2(panel.summary_label()->text().contains("1 regression(s)"), qPrintable(panel.summary_label()->text()));

    // the first row is selected by itself, and its history charted
    QVERIFY(test::wait_until([&] { return charted.count() > 0; }));
    QCOMPARE(panel.table()->currentIndex().row(), 0);
    QList<QLineSeries*> lines = test::series_of<QLineSeries>(panel.chart()->chart());
    QCOMPARE(lines.size(), 3);  // min, max, median
    QCOMPARE(lines.last()->count(), 3);  // one point per build, oldest first
    QCOMPARE(lines.last()->at(0).y(), 100.0);
    QCOMPARE(lines.last()->at(2).y(), 80.0);

    // the oldest build as A instead: 100 against 80 is a regression too
    QSignalSpy compared(&panel, &BuildsPanel::compared);
    panel.baseline_box()->setCurrentIndex(0);
    QVERIFY(test::wait_until([&] { return compared.count() > 0; }));
    QCOMPARE(panel.model()->compare().baseline, std::string("111111111111"));
  }

  void a_store_of_one_build_says_comparing_needs_two() {
    const QString db = dir_.filePath("one.db");
    {
      auto s = p64::Store::open(db.toStdString(), p64::test::without_plan_history());
      add_run(*s, "111111111111", 100);
    }
    Workbench wb;
    wb.set_store_path(db);
    BuildsPanel panel(wb);
    QSignalSpy done(&panel, &BuildsPanel::reloaded);
    QVERIFY(test::wait_until([&] { return done.count() > 0; }));
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY2(panel.summary_label()->text().contains("comparing needs two"), qPrintable(panel.summary_label()->text()));
  }
};

QTEST_MAIN(TestBuildsPanel)
#include "tst_builds_panel.moc"
