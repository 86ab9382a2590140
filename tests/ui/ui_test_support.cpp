#include "ui/ui_test_support.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QSettings>
#include <QThread>

#include "app/common/register_backends.h"
#include "engine/lab/store.h"

namespace p64::ui::test {

// Every test here links this file, so its QApplication registers the backends the way
// app/gui/main.cpp does before any Workbench is built.
static void register_backends_for_tests() { p64::register_all_backends(); }
Q_COREAPP_STARTUP_FUNCTION(register_backends_for_tests)

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

qint64 add_cpu_decode_run(const QString& db, double read_gbs) {
  auto store = Store::open(db.toStdString());
  RunBundle b;
  b.run.kind = RunKind::DecodeProxy;
  b.run.status = RunStatus::Ok;
  b.run.backend = "cpu";
  b.run.device = "AMD EPYC 9554 64-Core Processor (2 logical cores of a shared host)";
  b.run.config = "backend=cpu,opt.int8_activations=1,opt.kv_f16=0,opt.isa=avx512,threads=2";
  b.run.started_at = "2026-12-06T16:00:00Z";
  b.run.summary_json = R"({"decode_tok_s":{"median":21.5,"min":20.1,"max":22.0}})";
  ModelRecord m;
  m.path = "/home/someone/models/a-rather-long-folder-name/SmolLM2-1.7B-Instruct-Q4_K_M-converted.p64";
  m.name = "SmolLM2 1.7B Instruct (Q4_K_M, converted for the CPU)";
  m.sha256 = std::string(64, 'a');
  b.model = m;
  Passport p;
  p.device.backend = "cpu";
  p.device.name = b.run.device;
  p.measured.read_gbs = read_gbs;
  p.measured.repeats = 3;
  b.passport = p;
  return store->write_run(std::move(b));
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
