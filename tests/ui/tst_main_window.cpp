// The window's frame: panels present in order, actions carry their shortcuts, recent files
// persist in QSettings, dropped paths are recognised as models, the theme switches palettes.
#include <QtTest>

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMimeData>
#include <QHeaderView>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>

#include "engine/format/convert.h"
#include "engine/runtime/backend_registry.h"
#include "ui/shell/main_window.h"
#include "ui/shell/recent_files.h"
#include "ui/core/theme.h"
#include "ui/core/workbench.h"
#include "ui/models/run_table_model.h"
#include "ui/panels/panel.h"
#include "ui/panels/passport_panel.h"
#include "ui/panels/runs_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

class TestMainWindow : public QObject {
  Q_OBJECT
  QTemporaryDir settings_;

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void panels_in_order() {
    Workbench wb;
    MainWindow w(wb);
    QStringList ids;
    for (Panel* p : w.panels()) ids << p->id();
    QCOMPARE(ids, (QStringList{"models", "chat", "runs", "ab", "explore", "timeline", "roofline", "scoreboard",
                               "builds", "optimisations", "passport"}));
    w.show_panel("passport");
    QCOMPARE(QSettings().value("window/panel").toString(), QString("passport"));
  }

  // The passport panel opens on a backend that can run here, and one that cannot (a driver
  // missing) is listed, greyed, with its reason as text and tooltip; choosing it says why beside
  // the facts instead of offering a measurement.
  void passport_panel_starts_on_a_runnable_backend() {
    p64::register_backend({"fakegpu", -100,
                           [](std::string* why) {
                             *why = "no fakegpu driver on this host (test)";
                             return false;
                           },
                           [] { return std::unique_ptr<p64::Backend>(); }});
    Workbench wb;
    MainWindow w(wb);
    w.show_panel("passport");
    auto* panel = qobject_cast<PassportPanel*>(w.panel("passport"));
    QVERIFY(panel);
    QListWidget* list = panel->backends();
    QVERIFY(list->currentItem());
    QCOMPARE(panel->current_backend(), QString("cpu"));
    QListWidgetItem* fake = nullptr;
    for (int i = 0; i < list->count(); ++i)
      if (list->item(i)->text().startsWith("fakegpu")) fake = list->item(i);
    QVERIFY(fake);
    QVERIFY(fake->flags() & Qt::ItemIsEnabled);  // choosable, so that its reason can be read
    QVERIFY2(fake->text().contains("cannot run here"), qPrintable(fake->text()));
    QCOMPARE(fake->toolTip(), QString("no fakegpu driver on this host (test)"));
    list->setCurrentItem(fake);
    QCOMPARE(panel->current_backend(), QString("fakegpu"));
    QVERIFY2(panel->note()->text().contains("no fakegpu driver on this host (test)"), qPrintable(panel->note()->text()));
    for (QPushButton* b : panel->findChildren<QPushButton*>())
      if (b->text().contains("Measure again")) QVERIFY(!b->isEnabled());
  }

  // With a model named on the command line, --panel still decides the panel in front.
  void panel_option_holds_with_a_model() {
    QTemporaryDir dir;
    const QString model = dir.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    Workbench wb;
    wb.set_store_path(dir.filePath("lab.db"));
    MainWindow w(wb);
    w.show();
    w.open_model_at_start(model, "timeline");
    QVERIFY(test::wait_until([&] { return wb.model_path() == model && wb.jobs().isEmpty(); }, 60000));
    QCOMPARE(qobject_cast<QTabWidget*>(w.centralWidget())->currentWidget(), static_cast<QWidget*>(w.panel("timeline")));
  }

  // At the default window size the Runs table shows its measurement, however long the model,
  // device and config names of the runs are.
  void runs_decode_column_in_sight_at_the_default_size() {
    QTemporaryDir dir;
    const QString db = dir.filePath("lab.db");
    test::add_cpu_decode_run(db, 12.34);
    Workbench wb;
    wb.set_store_path(db);
    MainWindow w(wb);
    w.show();
    w.show_panel("runs");
    QCOMPARE(w.size(), QSize(1280, 820));
    auto* runs = qobject_cast<RunsPanel*>(w.panel("runs"));
    QVERIFY(runs);
    QVERIFY(test::wait_until([&] { return runs->runs()->rowCount() > 0 && wb.jobs().isEmpty(); }, 30000));
    QTableView* table = nullptr;
    for (QTableView* t : runs->findChildren<QTableView*>())
      if (t->model() == runs->filter()) table = t;
    QVERIFY(table);
    QCoreApplication::processEvents();
    const QHeaderView* header = table->horizontalHeader();
    const int right = header->sectionViewportPosition(RunTableModel::kDecode) + header->sectionSize(RunTableModel::kDecode);
    QVERIFY2(header->sectionViewportPosition(RunTableModel::kDecode) >= 0 && right <= table->viewport()->width(),
             qPrintable(QString("Decode column ends at %1 of %2").arg(right).arg(table->viewport()->width())));
  }

  void actions_have_shortcuts() {
    Workbench wb;
    MainWindow w(wb);
    auto* open = w.findChild<QAction*>("action_open");
    QVERIFY(open);
    QCOMPARE(open->shortcut(), QKeySequence(QKeySequence::Open));
    auto* stop = w.findChild<QAction*>("action_stop");
    QVERIFY(stop);
    QCOMPARE(stop->shortcut(), QKeySequence(Qt::Key_Escape));
    QStringList menus;
    for (QAction* a : w.menuBar()->actions()) menus << a->text().remove('&');
    QCOMPARE(menus, (QStringList{"File", "View", "Run", "Help"}));
  }

  void recent_files_persist() {
    QTemporaryDir dir;
    const QString a = dir.filePath("a.p64"), b = dir.filePath("b.gguf");
    for (const QString& f : {a, b}) {
      QFile file(f);
      QVERIFY(file.open(QIODevice::WriteOnly));
    }
    {
      RecentFiles r;
      r.clear();
      r.add(a);
      r.add(b);
      r.add(a);  // re-adding moves it to the front, no duplicate
    }
    RecentFiles again;
    QCOMPARE(again.files(), (QStringList{a, b}));
    for (int i = 0; i < 20; ++i) again.add(dir.filePath(QString("m%1.p64").arg(i)));
    QCOMPARE(again.files().size(), RecentFiles::kMax);
  }

  void model_paths_recognised() {
    QTemporaryDir dir;
    QVERIFY(looks_like_model_path("x/model.p64"));
    QVERIFY(looks_like_model_path("x/model.GGUF"));
    QVERIFY(looks_like_model_path("x/stories260K.bin"));
    QVERIFY(!looks_like_model_path("x/notes.txt"));
    QVERIFY(!looks_like_model_path(dir.path()));  // a folder without config.json
    QFile cfg(dir.filePath("config.json"));
    QVERIFY(cfg.open(QIODevice::WriteOnly));
    cfg.close();
    QVERIFY(looks_like_model_path(dir.path()));
  }

  void theme_switches_palette() {
    remember_system_palette();
    apply_theme(ThemeChoice::Dark);
    QVERIFY(current_theme_is_dark());
    apply_theme(ThemeChoice::Light);
    QVERIFY(!current_theme_is_dark());
    QCOMPARE(theme_from_name("dark"), ThemeChoice::Dark);
    QCOMPARE(theme_name(ThemeChoice::System), QString("system"));
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
