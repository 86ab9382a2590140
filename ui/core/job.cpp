#include "ui/core/job.h"

#include <QDateTime>
#include <QMetaObject>

#include "engine/common/error.h"

namespace p64::ui {

namespace {
enum Outcome { kSucceeded, kFailed, kCancelled };
}

Job::Job(QString title, Work work, QObject* parent)
    : QObject(parent), title_(std::move(title)), work_(std::move(work)) {}

Job::~Job() {
  if (thread_ != nullptr) {
    cancel();
    thread_->wait();
    delete thread_;
  }
}

void Job::start() {
  if (thread_ != nullptr) return;
  thread_ = QThread::create([this] {
    ProgressFn fn = [this](double f, std::string_view what) { return report(f, what); };
    int outcome = kSucceeded;
    QString message;
    try {
      work_(fn, *this);
      if (cancel_.load()) outcome = kCancelled;
    } catch (const Cancelled&) {
      outcome = kCancelled;
    } catch (const std::bad_alloc&) {
      outcome = kFailed;
      message = tr("Out of memory. Choose a smaller model or a shorter context.");
    } catch (const std::exception& e) {
      outcome = kFailed;
      message = QString::fromUtf8(e.what());
    }
    QMetaObject::invokeMethod(this, [this, outcome, message] { end(outcome, message); },
                              Qt::QueuedConnection);
  });
  thread_->start();
}

void Job::wait() {
  if (thread_ != nullptr) thread_->wait();
}

void Job::post(std::function<void()> fn) {
  QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

bool Job::report(double fraction, std::string_view what) {
  // Progress can arrive per token or per tensor; the GUI needs it a few times a second only.
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  if (now - last_report_ms_ >= 40 || fraction >= 1.0) {
    last_report_ms_ = now;
    Q_EMIT progress(fraction, QString::fromUtf8(what.data(), static_cast<qsizetype>(what.size())));
  }
  return !cancel_.load();
}

void Job::end(int outcome, const QString& message) {
  done_ = true;
  if (outcome == kSucceeded) Q_EMIT succeeded();
  else if (outcome == kCancelled) Q_EMIT cancelled();
  else Q_EMIT failed(message);
  Q_EMIT finished();
}

}  // namespace p64::ui
