// The first-start offer: with an empty store (the plan's imported history only) the window offers a
// synthetic model and its first measurements; accepted, it writes tiny-Q8_0.p64, stores a
// decode-proxy, a timeline and an A/B on the CPU, opens the model, and the Roofline, Timeline, A/B
// and Scoreboard panels have something to show. "Skip" with "Don't offer this again" is remembered;
// a store with runs is not offered; a cancelled first start ends cleanly.
#include <QtTest>

#include <QCheckBox>
#include <QChart>
#include <QChartView>
#include <QFileInfo>
#include <QPushButton>
#include <QSettings>

#include "engine/lab/store.h"
#include "ui/shell/first_start.h"
#include "ui/shell/first_start_work.h"
#include "ui/shell/main_window.h"
#include "ui/core/workbench.h"
#include "ui/core/job.h"
#include "ui/models/json_table_model.h"
#include "ui/models/roofline_model.h"
#include "ui/models/timeline_model.h"
#include "ui/panels/ab_panel.h"
#include "ui/panels/first_start_dialog.h"
#include "ui/panels/roofline_panel.h"
#include "ui/panels/scoreboard_panel.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

class TestFirstStart : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

  // Checks the store and returns whether the offer came (the dialog is then on screen).
  bool check(FirstStart& first) {
    QSignalSpy offered(&first, &FirstStart::offered), not_offered(&first, &FirstStart::not_offered);
    first.check();
    test::wait_until([&] { return offered.count() + not_offered.count() > 0; }, 30000);
    return offered.count() == 1;
  }

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }
  void init() { QSettings().remove("first_start"); }

  void accepted_offer_fills_every_panel() {
    const QString db = dir_.filePath("empty.db");
    Workbench wb;
    wb.set_store_path(db);
    MainWindow window(wb);
    window.show();
    FirstStart first(wb, &window);
    QVERIFY(check(first));
    QVERIFY(first.dialog() && first.dialog()->isVisible());

    QSignalSpy finished(&first, &FirstStart::finished);
    first.dialog()->accept_button()->click();  // the user accepts
    QVERIFY(first.job());
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 240000));
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

    const QString p64 = QFileInfo(FirstStart::model_path()).absolutePath() + "/tiny-Q8_0.p64";
    QVERIFY(QFileInfo::exists(p64));
    auto store = p64::Store::open(db.toStdString());
    QVERIFY(store_has_own_runs(*store));
    for (auto kind : {p64::RunKind::DecodeProxy, p64::RunKind::Timeline, p64::RunKind::Ab})
      QVERIFY(store->latest_run_id(kind).has_value());

    // The model opens in the workbench and the panels reload from the store.
    QVERIFY(test::wait_until([&] { return wb.model() != nullptr; }, 60000));
    QCOMPARE(QFileInfo(wb.model_path()).fileName(), QString("tiny-Q8_0.p64"));
    auto* roofline = qobject_cast<RooflinePanel*>(window.panel("roofline"));
    auto* timeline = qobject_cast<TimelinePanel*>(window.panel("timeline"));
    auto* ab = qobject_cast<AbPanel*>(window.panel("ab"));
    auto* scoreboard = qobject_cast<ScoreboardPanel*>(window.panel("scoreboard"));
    const bool filled = test::wait_until([&] {
      return roofline->runs()->rowCount() > 0 && timeline->split()->rowCount() > 0 && !ab->view().empty() &&
             scoreboard->scoreboard()->rowCount() > 0;
    }, 60000);
    QVERIFY2(filled, qPrintable(QString("roofline %1, timeline %2, A/B %3, scoreboard %4")
                                    .arg(roofline->runs()->rowCount())
                                    .arg(timeline->split()->rowCount())
                                    .arg(ab->view().empty() ? "empty" : "shown")
                                    .arg(scoreboard->scoreboard()->rowCount())));
    QVERIFY(!roofline->chart_view()->chart()->series().isEmpty());
    QVERIFY(!roofline->compute_chart_view()->chart()->series().isEmpty());
    QVERIFY(roofline->runs()->points().front().has_prefill());

    // With runs in the store, no second offer.
    FirstStart again(wb, &window);
    QVERIFY(!check(again));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  void skip_remembered_only_when_asked() {
    Workbench wb;
    wb.set_store_path(dir_.filePath("skip.db"));
    QWidget window;
    FirstStart first(wb, &window);
    QVERIFY(check(first));
    first.dialog()->skip_button()->click();  // skipped once: asked again next time
    QVERIFY(!QSettings().value("first_start/declined", false).toBool());
    QVERIFY(test::wait_until([&] { return first.dialog() == nullptr; }, 5000));
    QVERIFY(check(first));
    first.dialog()->never_again_box()->setChecked(true);
    first.dialog()->skip_button()->click();
    QVERIFY(QSettings().value("first_start/declined", false).toBool());
    FirstStart later(wb, &window);
    QVERIFY(!check(later));
    auto store = p64::Store::open(wb.store_path().toStdString());
    QVERIFY(!store_has_own_runs(*store));  // skipping measured nothing
  }

  void cancelled_first_start_ends_cleanly() {
    Workbench wb;
    wb.set_store_path(dir_.filePath("cancel.db"));
    QWidget window;
    FirstStart first(wb, &window);
    QVERIFY(check(first));
    QSignalSpy finished(&first, &FirstStart::finished);
    first.dialog()->accept_button()->click();
    QVERIFY(first.job());
    first.job()->cancel();
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
    QCOMPARE(finished.first().at(0).toBool(), false);
    QCOMPARE(finished.first().at(1).toString(), QString("Cancelled."));
    auto store = p64::Store::open(wb.store_path().toStdString());
    QVERIFY(!store_has_own_runs(*store));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  void work_refuses_a_plan_without_paths() {
    QVERIFY_THROWS_EXCEPTION(std::exception, run_first_start({}, {}));
  }
};

QTEST_MAIN(TestFirstStart)
#include "tst_first_start.moc"
