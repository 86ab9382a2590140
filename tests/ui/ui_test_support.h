#pragma once
#include <QChart>
#include <QList>
#include <QString>
#include <QTemporaryDir>

#include <functional>

namespace p64::ui::test {

// ../shared/models/NAME (P64_SHARED_DIR overrides the build-time path).
QString shared_model(const QString& name);

// Settings of each test go to a folder of its own (CTest sets XDG_CONFIG_HOME too), so a test
// never sees the user's recent files or theme.
void isolate_settings(const QTemporaryDir& dir);

// Polls the event loop until `done()` or `timeout_ms` passes; returns done().
template <typename F>
bool wait_until(F done, int timeout_ms = 60000);

// Writes one decode-proxy run of the CPU backend to the store at `db` (created when absent), with
// long model, device and config names as real ones are, and a passport whose measured read
// bandwidth is `read_gbs`; returns its run id.
qint64 add_cpu_decode_run(const QString& db, double read_gbs);

bool process_events_until(const std::function<bool()>& done, int timeout_ms);
template <typename F>
bool wait_until(F done, int timeout_ms) {
  return process_events_until(std::function<bool()>(done), timeout_ms);
}

// The chart's series of type T, in the order they were added.
template <typename T>
QList<T*> series_of(QChart* chart) {
  QList<T*> out;
  for (QAbstractSeries* s : chart->series())
    if (auto* t = qobject_cast<T*>(s)) out << t;
  return out;
}

}  // namespace p64::ui::test
