#pragma once
#include <QPointer>
#include <QVector>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ui/core/chat_engine.h"
#include "ui/panels/panel.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTextBrowser;

namespace p64::ui {

class ChatEngine;
class Job;

// Chat with the open model: backend, threads and sampler settings, a system prompt; the reply
// streams in with a live tok/s, can be stopped and regenerated; after each reply the first
// token's latency and the decode rate are shown. Conversations are kept in the store and can be
// reopened from the list on the left.
class ChatPanel : public Panel {
  Q_OBJECT
 public:
  explicit ChatPanel(Workbench& wb, QWidget* parent = nullptr);
  ~ChatPanel() override;
  QString id() const override { return "chat"; }
  QString title() const override { return tr("Chat"); }

  QComboBox* backend_box() const { return backend_; }
  QSpinBox* threads_box() const { return threads_; }
  QDoubleSpinBox* temperature_box() const { return temperature_; }
  QSpinBox* max_tokens_box() const { return max_tokens_; }
  QPlainTextEdit* system_edit() const { return system_; }
  QPlainTextEdit* input_edit() const { return input_; }
  QTextBrowser* transcript() const { return transcript_; }
  QLabel* rate_label() const { return rate_; }
  QSpinBox* context_box() const { return context_; }
  // "Context: 123 / 512 positions" after each turn; the notice of dropped turns beside it.
  QLabel* context_label() const { return context_meter_; }
  QLabel* template_label() const { return template_; }
  QListWidget* conversations() const { return conversations_; }
  bool replying() const { return !job_.isNull(); }
  QString last_reply() const;
  qint64 stored_session() const { return session_id_; }

  struct Turn {
    QString role, text, stats;  // role "notice": what the context policy did, shown between turns
  };
  const QVector<Turn>& turns() const { return turns_; }

 public Q_SLOTS:
  void send();
  void stop();
  void regenerate();
  // Takes the last message back into the input (its reply dropped) to be edited and sent again.
  void edit_last();
  void new_conversation();
  void open_conversation(qint64 session_id);
  void reload_conversations();

 Q_SIGNALS:
  void streamed(const QString& text);
  void reply_finished(bool ok, const QString& stop_reason);
  void conversations_reloaded();
  void conversation_opened(qint64 session_id);

 private:
  void start_turn(const QString& user_text, bool regenerate);
  void render();
  void set_replying(bool on);
  void end_turn();  // the reply job is over: not replying any more

  QComboBox* backend_;
  QSpinBox* threads_;
  QDoubleSpinBox* temperature_;
  QSpinBox* top_k_;
  QDoubleSpinBox* top_p_;
  QSpinBox* max_tokens_;
  QSpinBox* context_;
  QSpinBox* seed_;
  QPlainTextEdit* system_;
  QLabel* template_;
  QTextBrowser* transcript_;
  QPlainTextEdit* input_;
  QPushButton* send_;
  QPushButton* stop_;
  QPushButton* regenerate_;
  QPushButton* edit_;
  QPushButton* new_;
  QLabel* rate_;
  QLabel* context_meter_;
  QListWidget* conversations_;

  QVector<Turn> turns_;
  std::shared_ptr<ChatEngine> engine_;
  // A reopened conversation waiting for the engine (applied when the next turn creates it).
  std::optional<std::vector<ChatMessage>> pending_history_;
  qint64 session_id_ = 0;
  QPointer<Job> job_;
};

}  // namespace p64::ui
