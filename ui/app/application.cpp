#include "ui/app/application.h"

#include <QApplication>
#include <QSettings>

#include "p64/build_info.h"
#include "ui/app/theme.h"

namespace p64::ui {

void init_application_metadata() {
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
