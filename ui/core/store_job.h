#pragma once
// Reads from the lab store off the GUI thread: the worker opens its own Store (SQLite
// connections stay on one thread) and the result is handed back to `apply` on the GUI thread.
#include <QObject>
#include <QPointer>

#include <functional>
#include <memory>

#include "engine/lab/store.h"
#include "ui/core/workbench.h"
#include "ui/core/job.h"

namespace p64::ui {

template <typename T>
Job* query_store(Workbench& wb, QObject* context, const QString& title, std::function<T(Store&)> query,
                 std::function<void(T)> apply, std::function<void(const QString&)> on_error = {}) {
  auto result = std::make_shared<T>();
  const std::string path = wb.store_path().toStdString();
  auto* job = new Job(title, [path, result, query](const ProgressFn&, Job&) {
    auto store = Store::open(path);
    *result = query(*store);
  });
  QPointer<QObject> ctx(context);
  QObject::connect(job, &Job::succeeded, context, [result, apply] { apply(std::move(*result)); });
  if (on_error) QObject::connect(job, &Job::failed, context, on_error);
  wb.track(job);
  return job;
}

}  // namespace p64::ui
