// p64lab_screenshots: renders every panel of the workbench window offscreen (QWidget::grab) into
// <out dir>/<panel id>.png, for docs/images and the README; the Timeline panel's track view
// also alone, as timeline-track.png, and zoomed on one decode step, timeline-track-step.png, and
// the panel on its per-op roofline tab, timeline-roofline.png.
// Usage: p64lab_screenshots <out dir> [--db STORE] [--model MODEL] [--panel ID]... [--chat MESSAGE] [--ab]
//        [--ab-b-model MODEL]
// With --db the panels show that store's runs; with --model the model is opened first; with
// --chat the Chat panel sends MESSAGE (greedy, on the CPU) and waits for the reply; with --ab
// the A/B panel runs its default comparison with the per-op split first; --ab-b-model makes B run
// that model file with A's options (a comparison of two models).
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QDir>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QStringList>
#include <QTabWidget>
#include <QTemporaryDir>

#include <cstdio>

#include "ui/shell/application.h"
#include "ui/shell/main_window.h"
#include "ui/core/workbench.h"
#include "ui/panels/ab_panel.h"
#include "ui/panels/chat_panel.h"
#include "ui/charts/timeline_track_view.h"
#include "ui/panels/panel.h"
#include "ui/panels/timeline_panel.h"
#include "ui/ui_test_support.h"

namespace {

struct Args {
  QString out_dir;
  QString db;
  QString model;
  QStringList panels;  // empty: all
  QString chat;
  bool ab = false;
  QString ab_b_model;
};

bool parse(const QStringList& argv, Args* a) {
  for (int i = 1; i < argv.size(); ++i) {
    const QString& s = argv[i];
    const bool has_value = i + 1 < argv.size();
    if (s == "--db" && has_value)
      a->db = argv[++i];
    else if (s == "--model" && has_value)
      a->model = argv[++i];
    else if (s == "--panel" && has_value)
      a->panels << argv[++i];
    else if (s == "--chat" && has_value)
      a->chat = argv[++i];
    else if (s == "--ab")
      a->ab = true;
    else if (s == "--ab-b-model" && has_value)
      a->ab_b_model = argv[++i];
    else if (!s.startsWith("--") && a->out_dir.isEmpty())
      a->out_dir = s;
    else
      return false;
  }
  return !a->out_dir.isEmpty();
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  Args args;
  if (!parse(app.arguments(), &args)) {
    std::fprintf(stderr, "usage: p64lab_screenshots <out dir> [--db STORE] [--model MODEL] [--panel ID]... [--chat MESSAGE] [--ab] "
                 "[--ab-b-model MODEL]\n");
    return 2;
  }
  p64::ui::init_application_metadata();
  p64::ui::init_resources();
  // The user's geometry, theme and recent files must not leak into the pictures.
  QTemporaryDir settings_dir;
  p64::ui::test::isolate_settings(settings_dir);
  p64::ui::init_theme_from_settings();

  p64::ui::Workbench workbench;
  if (!args.db.isEmpty()) workbench.set_store_path(args.db);
  p64::ui::MainWindow window(workbench);
  window.resize(1280, 800);
  window.show();
  if (!args.model.isEmpty()) {
    window.open_model(args.model);
    if (!p64::ui::test::wait_until([&] { return workbench.model() != nullptr; }, 120000)) {
      std::fprintf(stderr, "p64lab_screenshots: %s: the model did not open\n", qPrintable(args.model));
      return 1;
    }
  }

  if (!args.chat.isEmpty()) {
    auto* chat = qobject_cast<p64::ui::ChatPanel*>(window.panel("chat"));
    if (!chat) return 1;
    window.show_panel("chat");
    chat->backend_box()->setCurrentText("cpu");
    chat->temperature_box()->setValue(0);
    chat->max_tokens_box()->setValue(60);
    bool done = false;
    QObject::connect(chat, &p64::ui::ChatPanel::reply_finished, [&done] { done = true; });
    chat->input_edit()->setPlainText(args.chat);
    chat->send();
    if (!p64::ui::test::wait_until([&] { return done; }, 120000)) {
      std::fprintf(stderr, "p64lab_screenshots: the chat reply did not finish\n");
      return 1;
    }
  }

  if (args.ab) {
    auto* ab = qobject_cast<p64::ui::AbPanel*>(window.panel("ab"));
    if (!ab) return 1;
    window.show_panel("ab");
    ab->split_box()->setChecked(true);
    if (!args.ab_b_model.isEmpty()) {
      ab->side_b().model->setText(args.ab_b_model);
      ab->side_b().options->setText(ab->side_a().options->text());
    }
    bool done = false;
    QObject::connect(ab, &p64::ui::AbPanel::ab_finished, [&done] { done = true; });
    ab->start_ab();
    if (!p64::ui::test::wait_until([&] { return done; }, 300000)) {
      std::fprintf(stderr, "p64lab_screenshots: the A/B did not finish\n");
      return 1;
    }
    if (ab->view().run_id == 0) {
      std::fprintf(stderr, "p64lab_screenshots: the A/B failed: %s\n", qPrintable(ab->status_label()->text()));
      return 1;
    }
  }

  if (!QDir().mkpath(args.out_dir)) {
    std::fprintf(stderr, "p64lab_screenshots: cannot create %s\n", qPrintable(args.out_dir));
    return 1;
  }
  int written = 0;
  for (p64::ui::Panel* panel : window.panels()) {
    if (!args.panels.isEmpty() && !args.panels.contains(panel->id())) continue;
    window.show_panel(panel->id());
    // Panels load their store views on the job pool when shown; give them time to land.
    p64::ui::test::wait_until([] { return false; }, 1500);
    const QString out = QDir(args.out_dir).filePath(panel->id() + ".png");
    if (!window.grab().save(out, "PNG")) {
      std::fprintf(stderr, "p64lab_screenshots: cannot write %s\n", qPrintable(out));
      return 1;
    }
    std::printf("%s\n", qPrintable(out));
    ++written;
    if (auto* timeline = qobject_cast<p64::ui::TimelinePanel*>(panel)) {
      // The track view as it opens (every step), then zoomed on the second step's ops.
      p64::ui::TimelineTrackView* view = timeline->track_view();
      const auto& steps = view->tracks().step_starts();
      for (const char* name : {"timeline-track.png", "timeline-track-step.png"}) {
        if (QString(name) == "timeline-track-step.png") {
          if (steps.size() < 3) break;
          view->set_window({steps[1].second, steps[2].second});
        }
        const QString track = QDir(args.out_dir).filePath(name);
        if (!view->grab().save(track, "PNG")) {
          std::fprintf(stderr, "p64lab_screenshots: cannot write %s\n", qPrintable(track));
          return 1;
        }
        std::printf("%s\n", qPrintable(track));
      }
      view->fit();
      // The per-op roofline tab: the table beside its bandwidth bars and compute roofline.
      QTabWidget* tabs = timeline->tabs();
      for (int i = 0; i < tabs->count(); ++i)
        if (tabs->tabText(i) == QObject::tr("Per-op roofline")) tabs->setCurrentIndex(i);
      const QString roofline = QDir(args.out_dir).filePath("timeline-roofline.png");
      if (!window.grab().save(roofline, "PNG")) {
        std::fprintf(stderr, "p64lab_screenshots: cannot write %s\n", qPrintable(roofline));
        return 1;
      }
      std::printf("%s\n", qPrintable(roofline));
      tabs->setCurrentIndex(0);
    }
  }
  if (written == 0) {
    std::fprintf(stderr, "p64lab_screenshots: no panel matched\n");
    return 1;
  }
  return 0;
}
