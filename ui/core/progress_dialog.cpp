#include "ui/core/progress_dialog.h"

#include <QProgressDialog>

#include "ui/core/job.h"

namespace p64::ui {

void show_progress_dialog(QWidget* parent, Job* job) {
  auto* dlg = new QProgressDialog(job->title(), QObject::tr("Cancel"), 0, 1000, parent);
  dlg->setObjectName("job_progress_dialog");
  dlg->setWindowTitle(job->title());
  dlg->setWindowModality(Qt::WindowModal);
  dlg->setMinimumDuration(300);  // quick jobs never flash a dialog
  dlg->setAutoClose(false);
  dlg->setAutoReset(false);
  dlg->setMinimumWidth(420);
  QObject::connect(job, &Job::progress, dlg, [dlg, job](double f, const QString& what) {
    dlg->setValue(static_cast<int>(f * 1000));
    dlg->setLabelText(QString("%1\n%2").arg(job->title(), what));
  });
  QObject::connect(dlg, &QProgressDialog::canceled, job, &Job::cancel);
  QObject::connect(job, &Job::finished, dlg, &QObject::deleteLater);
}

}  // namespace p64::ui
