#include "ui/core/workbench.h"

#include <QDir>
#include <QSettings>
#include <QStandardPaths>

#include "engine/lab/store.h"
#include "engine/model/model.h"
#include "engine/runtime/backend_registry.h"
#include "ui/core/job.h"

namespace p64::ui {

QString default_store_path() {
  // The CLI's default, so `p64 runs` and the workbench show the same history.
  return QString::fromStdString(p64::default_store_path());
}

Workbench::Workbench(QObject* parent) : QObject(parent) {
  QSettings s;
  store_path_ = s.value("store/path", default_store_path()).toString();
  backend_ = s.value("run/backend", "auto").toString();
}

Workbench::~Workbench() { cancel_all(); }

void Workbench::set_store_path(const QString& path) {
  if (path == store_path_) return;
  store_path_ = path;
  Q_EMIT store_changed();
}

void Workbench::set_model(const QString& path, std::shared_ptr<const Model> model) {
  model_path_ = path;
  model_ = std::move(model);
  Q_EMIT model_changed();
}

void Workbench::set_backend(const QString& name) {
  if (name == backend_) return;
  backend_ = name;
  QSettings().setValue("run/backend", name);
  Q_EMIT backend_changed();
}

QList<Workbench::BackendAvailability> Workbench::registered_backends() const {
  QList<BackendAvailability> all;
  for (const auto& f : backend_factories()) {
    std::string why;
    if (!f.available(&why) && why.empty()) why = "its availability check gave no reason";
    all.append({QString::fromStdString(f.name), QString::fromStdString(why)});
  }
  return all;
}

QStringList Workbench::available_backends(QStringList* unavailable_reasons) const {
  QStringList names;
  for (const BackendAvailability& b : registered_backends()) {
    if (b.why_not.isEmpty()) names << b.name;
    else if (unavailable_reasons) *unavailable_reasons << b.name + ": " + b.why_not;
  }
  return names;
}

QString Workbench::resolved_backend() const {
  try {
    return QString::fromStdString(resolve_backend_name(backend_.toStdString()));
  } catch (const std::exception&) {
    return backend_;
  }
}

void Workbench::track(Job* job) {
  job->setParent(this);
  jobs_.append(job);
  connect(job, &Job::finished, this, [this, job] {
    jobs_.removeAll(job);
    job->deleteLater();
    Q_EMIT jobs_changed();
  });
  connect(job, &Job::failed, this, [this, job](const QString& m) {
    Q_EMIT message(tr("%1 failed: %2").arg(job->title(), m));
  });
  Q_EMIT jobs_changed();
  job->start();
}

QList<Job*> Workbench::jobs() const {
  QList<Job*> out;
  for (const auto& j : jobs_)
    if (j) out << j.data();
  return out;
}

void Workbench::cancel_all() {
  for (const auto& j : jobs_)
    if (j) j->cancel();
}

}  // namespace p64::ui
