#pragma once
#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <functional>

#include "engine/common/progress.h"

namespace p64::ui {

// One piece of long engine work (convert, synth, a decode-proxy session, a chat reply) run on
// its own thread so the window never blocks. The work gets a ProgressFn; returning false from
// it is how cancel() reaches the engine, which then throws p64::Cancelled. Every outcome ends in
// exactly one of succeeded / failed / cancelled, then finished, all delivered on the GUI thread.
class Job : public QObject {
  Q_OBJECT
 public:
  using Work = std::function<void(const ProgressFn& progress, Job& job)>;

  Job(QString title, Work work, QObject* parent = nullptr);
  ~Job() override;

  const QString& title() const { return title_; }
  bool running() const { return thread_ != nullptr && !done_; }
  bool cancel_requested() const { return cancel_.load(); }

  void start();
  // Asks the work to stop at its next progress call; the job still ends with a signal.
  void cancel() { cancel_.store(true); }
  // Blocks until the work has ended (tests and shutdown only; the GUI never waits).
  void wait();

  // From the worker: runs `fn` on the GUI thread (streamed tokens, partial results).
  void post(std::function<void()> fn);

 Q_SIGNALS:
  void progress(double fraction, const QString& what);
  void succeeded();
  void failed(const QString& message);
  void cancelled();
  void finished();

 private:
  bool report(double fraction, std::string_view what);
  void end(int outcome, const QString& message);

  QString title_;
  Work work_;
  QThread* thread_ = nullptr;
  std::atomic<bool> cancel_{false};
  bool done_ = false;
  qint64 last_report_ms_ = -1000;
};

}  // namespace p64::ui
