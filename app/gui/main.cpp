// p64lab: the workbench. Everything lives in p64ui; main parses the command line and
// registers the backends this build has, which the ui cannot name (it sits below app/).
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "app/common/register_backends.h"
#include "ui/shell/application.h"
#include "ui/shell/first_start.h"
#include "ui/shell/main_window.h"
#include "ui/core/workbench.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  p64::ui::init_application_metadata();

  QCommandLineParser cli;
  cli.setApplicationDescription("P64 Lab: chat, decode-proxy, A/B, timeline, roofline and scoreboard");
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption db({"d", "db"}, "Lab store (SQLite) to open instead of the default.", "PATH");
  QCommandLineOption backend({"b", "backend"}, "Backend: auto, cpu, cuda, vulkan.", "NAME", "auto");
  QCommandLineOption panel("panel", "Panel to show first (models, chat, runs, ab, ...).", "ID");
  cli.addOptions({db, backend, panel});
  cli.addPositionalArgument("model", "Model file (.p64, .gguf, llama2.c .bin) or HF folder to open.");
  cli.process(app);

  p64::ui::init_theme_from_settings();
  p64::register_all_backends();
  p64::ui::Workbench workbench;
  if (cli.isSet(db)) workbench.set_store_path(cli.value(db));
  if (cli.isSet(backend)) workbench.set_backend(cli.value(backend));
  p64::ui::MainWindow window(workbench);
  if (cli.isSet(panel)) window.show_panel(cli.value(panel));
  window.show();
  if (!cli.positionalArguments().isEmpty()) {
    const QString path = cli.positionalArguments().first();
    const QString first_panel = cli.value(panel);
    QTimer::singleShot(0, &window, [&window, path, first_panel] { window.open_model_at_start(path, first_panel); });
  } else {
    // An empty store gets the offer of a synthetic model and its first measurements.
    auto* first_start = new p64::ui::FirstStart(workbench, &window);
    QTimer::singleShot(0, first_start, &p64::ui::FirstStart::check);
  }
  return app.exec();
}
