// The Passport panel shows what the Roofline uses: with no measurement in this session, the
// newest passport a run stored for the backend, its measured bandwidth included, saying where
// it came from.
#include <QtTest>

#include <QLabel>

#include "ui/core/workbench.h"
#include "ui/models/passport_model.h"
#include "ui/panels/passport_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

class TestPassportPanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void stored_bandwidth_is_shown_not_called_unmeasured() {
    const QString db = dir_.filePath("lab.db");
    const qint64 run = test::add_cpu_decode_run(db, 12.34);
    Workbench wb;
    wb.set_store_path(db);
    PassportPanel panel(wb);
    QCOMPARE(panel.current_backend(), QString("cpu"));
    QVERIFY(test::wait_until([&] { return panel.model()->value_of("Measured", "Read bandwidth") == "12.3 GB/s"; }, 30000));
    QVERIFY2(!panel.note()->text().contains("not been measured"), qPrintable(panel.note()->text()));
    QVERIFY2(panel.note()->text().contains(QString("run %1").arg(run)), qPrintable(panel.note()->text()));
  }

  void an_empty_store_says_not_measured() {
    Workbench wb;
    wb.set_store_path(dir_.filePath("empty.db"));
    PassportPanel panel(wb);
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
    QVERIFY2(panel.note()->text().contains("not been measured"), qPrintable(panel.note()->text()));
    QCOMPARE(panel.model()->value_of("Measured", "Read bandwidth"), QString());
  }
};

QTEST_MAIN(TestPassportPanel)
#include "tst_passport_panel.moc"
