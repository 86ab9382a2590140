#include "ui/ui_test_support.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QSettings>
#include <QThread>

namespace p64::ui::test {

QString shared_model(const QString& name) {
  QString dir = qEnvironmentVariable("P64_SHARED_DIR");
  if (dir.isEmpty()) dir = P64_SHARED_DIR;
  return dir + "/models/" + name;
}

void isolate_settings(const QTemporaryDir& dir) {
  QCoreApplication::setOrganizationName("p64lab-test");
  QCoreApplication::setApplicationName("p64lab-test");
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.path());
  QSettings().clear();
}

bool process_events_until(const std::function<bool()>& done, int timeout_ms) {
  QDeadlineTimer deadline(timeout_ms);
  while (!done()) {
    if (deadline.hasExpired()) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(5);
  }
  return true;
}

}  // namespace p64::ui::test
