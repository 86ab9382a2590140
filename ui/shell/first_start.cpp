#include "ui/shell/first_start.h"

#include <QCheckBox>
#include <QFileInfo>
#include <QSettings>

#include <memory>

#include "engine/lab/store.h"
#include "ui/shell/first_start_work.h"
#include "ui/core/workbench.h"
#include "ui/core/job.h"
#include "ui/core/progress_dialog.h"
#include "ui/core/store_job.h"
#include "ui/panels/first_start_dialog.h"
#include "ui/panels/synth_dialog.h"

namespace p64::ui {

namespace {
constexpr const char* kDeclinedKey = "first_start/declined";
}

FirstStart::FirstStart(Workbench& wb, QWidget* window) : QObject(window), wb_(wb), window_(window) {}

FirstStartDialog* FirstStart::dialog() const { return dialog_; }
Job* FirstStart::job() const { return job_; }

QString FirstStart::model_path() { return SynthDialog::default_output_path("tiny", "Q8_0"); }

void FirstStart::check() {
  if (QSettings().value(kDeclinedKey, false).toBool()) {
    Q_EMIT not_offered(tr("declined earlier (%1 in the settings)").arg(kDeclinedKey));
    return;
  }
  query_store<bool>(
      wb_, this, tr("Looking for measurements"), [](Store& s) { return store_has_own_runs(s); },
      [this](bool has_runs) {
        if (has_runs) Q_EMIT not_offered(tr("the store has runs"));
        else offer();
      },
      [this](const QString& m) { Q_EMIT not_offered(tr("the store could not be read: %1").arg(m)); });
}

void FirstStart::offer() {
  if (dialog_) return;
  dialog_ = new FirstStartDialog(model_path(), window_);
  dialog_->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog_, &QDialog::finished, this, [this](int result) {
    if (result == QDialog::Accepted) {
      start();
      return;
    }
    if (dialog_->never_again_box()->isChecked()) QSettings().setValue(kDeclinedKey, true);
    Q_EMIT finished(false, tr("Skipped."));
  });
  dialog_->open();  // window-modal, without blocking the caller
  Q_EMIT offered();
}

void FirstStart::start() {
  FirstStartPlan plan;
  plan.gguf_path = model_path().toStdString();
  plan.store_path = wb_.store_path().toStdString();
  auto out = std::make_shared<FirstStartOutcome>();
  auto* job = new Job(tr("First start: a synthetic model and its first measurements"),
                      [plan, out](const ProgressFn& progress, Job&) { *out = run_first_start(plan, progress); });
  job_ = job;
  connect(job, &Job::succeeded, this, [this, out] {
    const QString p64 = QString::fromStdString(out->p64_path);
    // An empty store now has runs of every kind: every page reloads as for a newly chosen store
    // (the A/B page, which keeps its editors on store_written, takes the new comparison too).
    Q_EMIT wb_.store_changed();
    wb_.request_open(p64);
    wb_.show_panel("runs");
    const QString m = tr("First measurements stored (decode-proxy #%1, timeline #%2, A/B #%3) for %4.")
                          .arg(out->decode_proxy_run)
                          .arg(out->timeline_run)
                          .arg(out->ab_run)
                          .arg(QFileInfo(p64).fileName());
    Q_EMIT wb_.message(m);
    Q_EMIT finished(true, m);
  });
  connect(job, &Job::failed, this, [this](const QString& m) {
    Q_EMIT wb_.message(tr("First start failed: %1").arg(m));
    Q_EMIT finished(false, m);
  });
  connect(job, &Job::cancelled, this, [this] {
    // Whatever was stored before the cancel stays (each run is written whole or not at all).
    Q_EMIT wb_.store_written();
    Q_EMIT finished(false, tr("Cancelled."));
  });
  show_progress_dialog(window_, job);
  wb_.track(job);
}

}  // namespace p64::ui
