#pragma once
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <memory>

namespace p64 {
class Model;
}

namespace p64::ui {

class Job;

// What every panel shares: the open model, the chosen backend, the store's path, and the
// long jobs in flight (the status bar shows them, Run > Stop cancels them). Panels talk to
// each other only through this object, never to one another.
class Workbench : public QObject {
  Q_OBJECT
 public:
  // Offers the backends already in the registry: the executable that owns the workbench
  // registers those it was built with first (app/gui/main.cpp), as the ui knows none by name.
  explicit Workbench(QObject* parent = nullptr);
  ~Workbench() override;

  // The store (SQLite) file; defaults to the XDG data dir, `--db` or settings override it.
  QString store_path() const { return store_path_; }
  void set_store_path(const QString& path);

  QString model_path() const { return model_path_; }
  std::shared_ptr<const Model> model() const { return model_; }
  void set_model(const QString& path, std::shared_ptr<const Model> model);

  QString backend() const { return backend_; }  // "auto", "cpu", "cuda", "vulkan"
  void set_backend(const QString& name);
  // Every registered backend, in the registry's order, with why it cannot run here (empty when it can).
  struct BackendAvailability {
    QString name;
    QString why_not;
  };
  QList<BackendAvailability> registered_backends() const;
  // Names of registered backends that can run here, and why the others cannot.
  QStringList available_backends(QStringList* unavailable_reasons = nullptr) const;
  QString resolved_backend() const;  // "auto" resolved by rank

  // Takes ownership; the job starts, is listed until it ends, and is deleted afterwards.
  void track(Job* job);
  QList<Job*> jobs() const;
  void cancel_all();

  // The device the chosen backend runs on, as its passport names it (status bar).
  QString device() const { return device_; }
  void set_device(const QString& name) { device_ = name; Q_EMIT backend_changed(); }

  // Asks the Models panel to open a file (menus, recent files, drops, the command line).
  void request_open(const QString& path) { Q_EMIT open_requested(path); }

  // Asks the window to show a panel ("models", "chat", ...); panels use it to hand over.
  void show_panel(const QString& id) { Q_EMIT panel_requested(id); }
  // Shows one stored run in the Runs panel (links from the history and the A/B page).
  void show_run(qint64 run_id) {
    show_panel("runs");
    Q_EMIT run_requested(run_id);
  }

 Q_SIGNALS:
  void model_changed();
  void backend_changed();
  void store_changed();
  void jobs_changed();
  void panel_requested(const QString& id);
  void open_requested(const QString& path);
  void run_requested(qint64 run_id);
  // A run/comparison/optimisation was written to the store: views reload.
  void store_written();
  void message(const QString& text);

 private:
  QString store_path_;
  QString model_path_;
  std::shared_ptr<const Model> model_;
  QString backend_ = "auto";
  QString device_;
  QList<QPointer<Job>> jobs_;
};

QString default_store_path();

}  // namespace p64::ui
