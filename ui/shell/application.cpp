#include "ui/shell/application.h"

#include <QApplication>
#include <QSettings>

#include "p64/build_info.h"
#include "ui/core/theme.h"

// Resources of a static library are registered by hand (the macro must be used outside a namespace).
static void init_p64lab_resources() { Q_INIT_RESOURCE(p64lab); }

namespace p64::ui {

void init_resources() {
  static bool done = false;
  if (!done) init_p64lab_resources();
  done = true;
}

void init_application_metadata() {
  init_resources();
  QApplication::setOrganizationName("p64lab");
  QApplication::setOrganizationDomain("p64lab.org");
  QApplication::setApplicationName("p64lab");
  QApplication::setApplicationDisplayName("P64 Lab");
  QApplication::setApplicationVersion(QString("%1 (%2)").arg(build::version, build::git_revision));
  QApplication::setDesktopFileName("p64lab");
}

void init_theme_from_settings() {
  remember_system_palette();
  apply_theme(theme_from_name(QSettings().value("view/theme", "system").toString()));
}

}  // namespace p64::ui
