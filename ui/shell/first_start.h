#pragma once
// The first-start offer (issue 3): with a store that holds no run of its own, the workbench
// offers to create a small synthetic model and measure it (first_start_work.h) so every panel has
// something to show. The offer is a non-blocking dialog; "Skip" with "Don't offer this again" is
// remembered in QSettings (first_start/declined). Accepted, the work runs as a Job with a progress
// dialog and cancel; at the end the model is opened and the panels reload.
#include <QObject>
#include <QPointer>
#include <QString>

namespace p64::ui {

class FirstStartDialog;
class Job;
class Workbench;

class FirstStart : public QObject {
  Q_OBJECT
 public:
  FirstStart(Workbench& wb, QWidget* window);
  // Reads the store off the GUI thread; shows the offer when it is wanted, else says why not.
  void check();
  FirstStartDialog* dialog() const;  // the offer on screen, nullptr when none
  Job* job() const;                  // the work once accepted
  static QString model_path();  // where the synthetic GGUF is written

 Q_SIGNALS:
  void offered();
  void not_offered(const QString& why);
  // ok: the model exists and the runs are stored; otherwise `message` says what happened.
  void finished(bool ok, const QString& message);

 private:
  void offer();
  void start();

  Workbench& wb_;
  QWidget* window_;
  QPointer<FirstStartDialog> dialog_;
  QPointer<Job> job_;
};

}  // namespace p64::ui
