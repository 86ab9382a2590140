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
#include <QPushButton>

#include "ui/app/main_window.h"
#include "ui/app/recent_files.h"
#include "ui/app/theme.h"
#include "ui/app/workbench.h"
#include "ui/panels/panel.h"
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
    QCOMPARE(ids, (QStringList{"models", "chat", "runs", "ab", "timeline", "roofline", "scoreboard",
                               "optimisations", "passport"}));
    w.show_panel("passport");
    QCOMPARE(QSettings().value("window/panel").toString(), QString("passport"));
  }

  // The passport panel opens on a backend that can run here, and one that cannot (CUDA without a
  // driver) says why instead of offering a measurement.
  void passport_panel_starts_on_a_runnable_backend() {
    Workbench wb;
    MainWindow w(wb);
    w.show_panel("passport");
    QListWidget* list = nullptr;  // the panel's backend list: the one that offers "cpu"
    for (QListWidget* l : w.findChildren<QListWidget*>())
      if (!l->findItems("cpu", Qt::MatchExactly).isEmpty()) list = l;
    QVERIFY(list);
    QVERIFY(list->currentItem());
    QVERIFY(list->currentItem()->flags() & Qt::ItemIsEnabled);
    for (int i = 0; i < list->count(); ++i) {
      if (list->item(i)->flags() & Qt::ItemIsEnabled) continue;
      list->setCurrentRow(i);
      bool says_why = false;
      for (QLabel* l : w.findChildren<QLabel*>()) says_why |= l->text().contains("cannot run here");
      QVERIFY(says_why);
      auto* measure = w.findChild<QPushButton*>();
      bool measure_disabled = false;
      for (QPushButton* b : w.findChildren<QPushButton*>())
        if (b->text().contains("Measure again")) measure_disabled = !b->isEnabled();
      QVERIFY(measure && measure_disabled);
    }
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
