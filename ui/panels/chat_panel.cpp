#include "ui/panels/chat_panel.h"

#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <chrono>

#include <nlohmann/json.hpp>

#include "ui/core/chat_engine.h"
#include "ui/core/workbench.h"
#include "ui/core/job.h"
#include "ui/core/store_job.h"

namespace p64::ui {

namespace {
struct TurnOutcome {
  std::shared_ptr<ChatEngine> engine;
  ChatTurnResult turn;
  bool done = false;  // the turn ran (a cancelled one included)
};

QString stats_line(const GenerateResult& r) {
  const auto& s = r.stats;
  return QObject::tr("TTFT %1 ms · decode %2 tok/s · prefill %3 tok/s · %4 tokens · prompt %5 (%6 reused) · stop: %7")
      .arg(1e3 * s.ttft_s, 0, 'f', 1)
      .arg(s.decode_tok_s(), 0, 'f', 1)
      .arg(s.prefill_tok_s(), 0, 'f', 1)
      .arg(s.generated_tokens)
      .arg(s.prompt_tokens)
      .arg(s.reused_tokens)
      .arg(QString::fromUtf8(stop_reason_name(r.stop)));
}
}  // namespace

ChatPanel::ChatPanel(Workbench& wb, QWidget* parent) : Panel(wb, parent) {
  // --- settings ---
  backend_ = new QComboBox(this);
  backend_->addItem("auto");
  backend_->addItems(wb_.available_backends());
  backend_->setCurrentText(wb_.backend());
  threads_ = new QSpinBox(this);
  threads_->setRange(0, 256);
  threads_->setSpecialValueText(tr("all cores"));
  temperature_ = new QDoubleSpinBox(this);
  temperature_->setRange(0, 2);
  temperature_->setSingleStep(0.05);
  temperature_->setValue(0.7);
  temperature_->setSpecialValueText(tr("0 (greedy)"));
  top_k_ = new QSpinBox(this);
  top_k_->setRange(0, 1000);
  top_k_->setValue(40);
  top_p_ = new QDoubleSpinBox(this);
  top_p_->setRange(0.05, 1);
  top_p_->setSingleStep(0.05);
  top_p_->setValue(0.9);
  max_tokens_ = new QSpinBox(this);
  max_tokens_->setRange(1, 32768);
  max_tokens_->setValue(256);
  context_ = new QSpinBox(this);
  context_->setRange(16, 1 << 20);
  context_->setValue(4096);
  context_->setSuffix(tr(" positions"));
  context_->setToolTip(tr("KV cache positions (the CLI's --ctx), capped by the model's trained context. "
                          "When the conversation fills them, the oldest turns are dropped; the system prompt stays."));
  seed_ = new QSpinBox(this);
  seed_->setRange(0, 1 << 30);
  system_ = new QPlainTextEdit(this);
  system_->setPlaceholderText(tr("System prompt (empty: the template's default)"));
  system_->setMaximumHeight(70);
  template_ = new QLabel(tr("Template: detected when the model loads"), this);
  template_->setWordWrap(true);
  auto* settings = new QGroupBox(tr("Settings"), this);
  auto* form = new QFormLayout(settings);
  form->addRow(tr("Backend:"), backend_);
  form->addRow(tr("Threads:"), threads_);
  form->addRow(tr("Temperature:"), temperature_);
  form->addRow(tr("Top-k:"), top_k_);
  form->addRow(tr("Top-p:"), top_p_);
  form->addRow(tr("Max tokens:"), max_tokens_);
  form->addRow(tr("Context:"), context_);
  form->addRow(tr("Seed:"), seed_);
  form->addRow(template_);

  conversations_ = new QListWidget(this);
  conversations_->setTextElideMode(Qt::ElideRight);
  conversations_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  new_ = new QPushButton(tr("New conversation"), this);
  auto* left = new QWidget(this);
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->addWidget(settings);
  ll->addWidget(new QLabel(tr("<b>Conversations</b> (stored)"), left));
  ll->addWidget(conversations_, 1);
  ll->addWidget(new_);
  left->setMaximumWidth(340);

  // --- conversation ---
  transcript_ = new QTextBrowser(this);
  transcript_->setOpenLinks(false);
  input_ = new QPlainTextEdit(this);
  input_->setPlaceholderText(tr("Message (Ctrl+Enter sends)"));
  input_->setMaximumHeight(90);
  send_ = new QPushButton(tr("Send"), this);
  send_->setDefault(true);
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setEnabled(false);
  regenerate_ = new QPushButton(tr("Regenerate"), this);
  regenerate_->setEnabled(false);
  edit_ = new QPushButton(tr("Edit last"), this);
  edit_->setToolTip(tr("Put the last message back in the input, without its reply, to edit and resend it"));
  edit_->setEnabled(false);
  rate_ = new QLabel(this);
  rate_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  context_meter_ = new QLabel(tr("Context: the model loads with the first message"), this);
  context_meter_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(rate_, 1);
  buttons->addWidget(edit_);
  buttons->addWidget(regenerate_);
  buttons->addWidget(stop_);
  buttons->addWidget(send_);
  auto* right = new QWidget(this);
  auto* rl = new QVBoxLayout(right);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->addWidget(system_);
  rl->addWidget(transcript_, 1);
  rl->addWidget(context_meter_);
  rl->addWidget(input_);
  rl->addLayout(buttons);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(split);

  connect(send_, &QPushButton::clicked, this, &ChatPanel::send);
  connect(stop_, &QPushButton::clicked, this, &ChatPanel::stop);
  connect(regenerate_, &QPushButton::clicked, this, &ChatPanel::regenerate);
  connect(edit_, &QPushButton::clicked, this, &ChatPanel::edit_last);
  connect(new_, &QPushButton::clicked, this, &ChatPanel::new_conversation);
  auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), input_);
  shortcut->setContext(Qt::WidgetWithChildrenShortcut);
  connect(shortcut, &QShortcut::activated, this, &ChatPanel::send);
  connect(conversations_, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { open_conversation(item->data(Qt::UserRole).toLongLong()); });
  connect(&wb_, &Workbench::store_changed, this, &ChatPanel::reload_conversations);
  connect(&wb_, &Workbench::model_changed, this, [this] {
    if (!replying()) new_conversation();
  });
  render();
  reload_conversations();
}

ChatPanel::~ChatPanel() {
  if (job_) {
    job_->cancel();
    job_->wait();
  }
}

namespace {
QString context_text(const ChatSession::ContextUse& use) {
  return QObject::tr("Context: %1 / %2 positions (%3%)")
      .arg(use.used)
      .arg(use.length)
      .arg(use.length ? 100.0 * use.used / use.length : 0.0, 0, 'f', 0);
}
}  // namespace

QString ChatPanel::last_reply() const {
  for (auto it = turns_.rbegin(); it != turns_.rend(); ++it)
    if (it->role == "assistant") return it->text;
  return {};
}

void ChatPanel::render() {
  QString html;
  for (const Turn& t : turns_) {
    if (t.role == "notice") {
      html += QString("<p style='color:gray'><i>%1</i></p>").arg(t.text.toHtmlEscaped());
      continue;
    }
    const bool user = t.role == "user";
    html += QString("<p style='margin-top:8px'><b style='color:%1'>%2</b><br>%3</p>")
                .arg(user ? "#3d85c6" : "#e08a2c", user ? tr("You") : tr("Model"),
                     t.text.toHtmlEscaped().replace('\n', "<br>"));
    if (!t.stats.isEmpty()) html += QString("<p style='color:gray; font-size:small'>%1</p>").arg(t.stats.toHtmlEscaped());
  }
  if (turns_.isEmpty())
    html = tr("<p style='color:gray'>%1</p>")
               .arg(wb_.model_path().isEmpty() ? tr("Open a model in Models, then write a message below.")
                                               : tr("Chat with %1: write a message below.")
                                                     .arg(QFileInfo(wb_.model_path()).fileName().toHtmlEscaped()));
  transcript_->setHtml(html);
  transcript_->verticalScrollBar()->setValue(transcript_->verticalScrollBar()->maximum());
}

void ChatPanel::set_replying(bool on) {
  send_->setEnabled(!on);
  stop_->setEnabled(on);
  regenerate_->setEnabled(!on && !last_reply().isNull() && !turns_.isEmpty() && turns_.back().role == "assistant");
  edit_->setEnabled(!on && !turns_.isEmpty());
  new_->setEnabled(!on);
  conversations_->setEnabled(!on);
  backend_->setEnabled(!on);
  threads_->setEnabled(!on);
  context_->setEnabled(!on);
}

// The turn is over for the panel before reply_finished goes out: whoever hears it may send,
// edit or regenerate at once (the Job object itself is deleted later by its owner).
void ChatPanel::end_turn() {
  job_ = nullptr;
  set_replying(false);
}

void ChatPanel::send() {
  const QString text = input_->toPlainText().trimmed();
  if (text.isEmpty() || replying()) return;
  input_->clear();
  start_turn(text, false);
}

void ChatPanel::regenerate() {
  if (replying() || turns_.size() < 2 || turns_.back().role != "assistant") return;
  turns_.removeLast();
  start_turn(turns_.back().text, true);
}

void ChatPanel::edit_last() {
  if (replying()) return;
  int user = -1;
  for (int i = turns_.size() - 1; i >= 0 && user < 0; --i)
    if (turns_[i].role == "user") user = i;
  if (user < 0) return;
  input_->setPlainText(turns_[user].text);
  const int dropped = turns_.size() - user;
  turns_.resize(user);
  if (engine_) {
    auto h = engine_->chat().history();
    h.resize(h.size() >= static_cast<size_t>(dropped) ? h.size() - dropped : 0);
    engine_->chat().set_history(std::move(h));
  } else if (pending_history_) {
    pending_history_->resize(pending_history_->size() >= static_cast<size_t>(dropped) ? pending_history_->size() - dropped : 0);
  }
  render();
  set_replying(false);
  input_->setFocus();
}

void ChatPanel::stop() {
  if (job_) job_->cancel();
}

void ChatPanel::new_conversation() {
  if (replying()) return;
  turns_.clear();
  session_id_ = 0;
  pending_history_.reset();
  if (engine_) {
    engine_->chat().reset();
    engine_->stored_session = 0;
    context_meter_->setText(context_text(engine_->chat().context_use()));
  }
  rate_->clear();
  render();
  set_replying(false);
}

void ChatPanel::start_turn(const QString& user_text, bool regenerate) {
  if (wb_.model_path().isEmpty()) {
    rate_->setText(tr("Open a model in the Models panel first (File › Open, Ctrl+O)."));
    if (regenerate) turns_ << Turn{"assistant", {}, {}};
    return;
  }
  if (!regenerate) turns_ << Turn{"user", user_text, {}};
  turns_ << Turn{"assistant", {}, {}};
  render();

  ChatConfig config;
  config.model_path = wb_.model_path().toStdString();
  config.model = wb_.model();
  config.backend = backend_->currentText().toStdString();
  config.threads = static_cast<uint32_t>(threads_->value());
  config.max_context = static_cast<uint32_t>(context_->value());
  ChatTurnRequest req;
  req.user_text = user_text.toStdString();
  req.system = system_->toPlainText().toStdString();
  req.regenerate = regenerate;
  req.store_path = wb_.store_path().toStdString();
  req.options.max_tokens = max_tokens_->value();
  req.options.sampler.temperature = static_cast<float>(temperature_->value());
  req.options.sampler.top_k = top_k_->value();
  req.options.sampler.top_p = static_cast<float>(top_p_->value());
  req.options.sampler.seed = static_cast<uint64_t>(seed_->value());
  const auto& sp = req.options.sampler;
  req.sampler_json = nlohmann::json{{"temperature", sp.temperature}, {"top_k", sp.top_k}, {"top_p", sp.top_p},
                                    {"seed", sp.seed}, {"max_tokens", req.options.max_tokens}}
                         .dump();

  auto out = std::make_shared<TurnOutcome>();
  std::shared_ptr<ChatEngine> engine = engine_;
  auto pending = pending_history_;
  pending_history_.reset();
  const qint64 session_id = session_id_;
  QPointer<ChatPanel> self(this);
  auto* job = new Job(tr("chat reply"), [=](const ProgressFn& progress, Job& j) {
    std::shared_ptr<ChatEngine> e = engine;
    if (!e || !e->config().same_engine(config)) {
      if (progress) progress(0, "loading the model");
      auto fresh = std::make_shared<ChatEngine>(config);
      if (e) fresh->chat().set_history(e->chat().history());  // a backend switch keeps the conversation
      fresh->stored_session = e ? e->stored_session : session_id;
      e = fresh;
    }
    if (pending) {
      e->chat().set_history(*pending);
      e->stored_session = session_id;
    }
    out->engine = e;
    // Text and the live rate reach the window a few times a second, not once per token.
    using clock = std::chrono::steady_clock;
    std::string held;
    int tokens = 0;
    clock::time_point first{}, last_post{};
    auto flush = [&](bool final_chunk) {
      const double secs = tokens > 1 ? std::chrono::duration<double>(clock::now() - first).count() : 0;
      const double rate = secs > 0 ? (tokens - 1) / secs : 0;
      j.post([self, text = QString::fromStdString(held), tokens, rate, final_chunk] {
        if (!self) return;
        if (!self->turns_.isEmpty()) self->turns_.last().text += text;
        self->rate_->setText(tr("streaming: %1 tokens, %2 tok/s").arg(tokens).arg(rate, 0, 'f', 1));
        self->render();
        if (!text.isEmpty()) Q_EMIT self->streamed(text);
      });
      held.clear();
      last_post = clock::now();
    };
    StreamFn stream = [&](std::string_view text, int32_t id) {
      if (id >= 0) {
        if (tokens++ == 0) first = clock::now();
      }
      held.append(text);
      if (id < 0 || clock::now() - last_post > std::chrono::milliseconds(40)) flush(id < 0);
      return !j.cancel_requested();
    };
    out->turn = run_chat_turn(*e, req, stream);
    if (!held.empty()) flush(true);
    out->done = true;
  });
  job_ = job;
  set_replying(true);
  rate_->setText(engine ? tr("thinking…") : tr("loading the model…"));
  connect(job, &Job::failed, this, [this](const QString& m) {
    if (!turns_.isEmpty() && turns_.last().role == "assistant" && turns_.last().text.isEmpty()) turns_.removeLast();
    rate_->setText(tr("<b>Chat failed:</b> %1").arg(m.toHtmlEscaped()));
    render();
    end_turn();
    Q_EMIT reply_finished(false, {});
  });
  // Stopped before the turn ran (the engine threw Cancelled while loading or prefilling): no
  // reply exists, but the turn still ends with reply_finished, as a stopped reply does.
  connect(job, &Job::cancelled, this, [this, out] {
    if (out->done) return;
    if (!turns_.isEmpty() && turns_.last().role == "assistant" && turns_.last().text.isEmpty()) turns_.removeLast();
    rate_->setText(tr("Stopped before the reply began."));
    render();
    end_turn();
    Q_EMIT reply_finished(true, QString::fromUtf8(stop_reason_name(StopReason::Cancelled)));
  });
  connect(job, &Job::finished, this, [this, out] {
    if (out->engine) {
      engine_ = out->engine;
      template_->setText(tr("Template: %1%2")
                             .arg(QString::fromStdString(engine_->template_name()),
                                  engine_->chat().template_warning().empty()
                                      ? tr(" (detected)")
                                      : " — " + QString::fromStdString(engine_->chat().template_warning())));
    }
    if (out->done) {
      const GenerateResult& r = out->turn.reply;
      if (!turns_.isEmpty()) {
        turns_.last().text = QString::fromStdString(r.text);  // the authoritative text (stop strings cut)
        turns_.last().stats = stats_line(r);
      }
      session_id_ = out->turn.session_id;
      const std::string notice = context_notice(out->turn.fit);
      // Before this exchange's message: the turns above it are out of the model's sight now.
      if (!notice.empty() && turns_.size() >= 2)
        turns_.insert(turns_.size() - 2, Turn{"notice", QString::fromStdString(notice), {}});
      context_meter_->setText(context_text(out->turn.context) +
                              (notice.empty() ? QString() : tr(" — %1").arg(QString::fromStdString(notice))));
      rate_->setText(tr("TTFT %1 ms · decode %2 tok/s").arg(1e3 * r.stats.ttft_s, 0, 'f', 1).arg(r.stats.decode_tok_s(), 0, 'f', 1));
      render();
      end_turn();
      Q_EMIT reply_finished(true, QString::fromUtf8(stop_reason_name(r.stop)));
      reload_conversations();
    }
    end_turn();
  });
  wb_.track(job);
}

void ChatPanel::reload_conversations() {
  query_store<std::vector<ChatSessionRecord>>(
      wb_, this, tr("Reading conversations"), stored_conversations,
      [this](std::vector<ChatSessionRecord> sessions) {
        conversations_->clear();
        for (auto it = sessions.rbegin(); it != sessions.rend(); ++it) {
          auto* item = new QListWidgetItem(QString("%1 — %2").arg(QString::fromStdString(it->title),
                                                                  QString::fromStdString(it->created_at).left(16)));
          item->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(it->id));
          item->setToolTip(tr("%1, template %2").arg(QString::fromStdString(it->backend),
                                                     QString::fromStdString(it->template_name)));
          conversations_->addItem(item);
        }
        Q_EMIT conversations_reloaded();
      });
}

void ChatPanel::open_conversation(qint64 id) {
  if (replying()) return;
  query_store<StoredConversation>(
      wb_, this, tr("Reading conversation %1").arg(id),
      [id](Store& s) { return load_conversation(s, id); },
      [this](StoredConversation c) {
        if (replying()) return;
        turns_.clear();
        for (const auto& m : c.history) turns_ << Turn{QString::fromStdString(m.role), QString::fromStdString(m.content), {}};
        system_->setPlainText(QString::fromStdString(c.system));
        session_id_ = c.id;
        if (engine_) {
          engine_->chat().set_history(c.history);
          engine_->stored_session = c.id;
        } else {
          pending_history_ = c.history;
        }
        rate_->setText(tr("Reopened conversation %1.").arg(c.id));
        render();
        set_replying(false);
        Q_EMIT conversation_opened(c.id);
      });
}

}  // namespace p64::ui
