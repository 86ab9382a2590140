// The Chat page on the CPU backend with stories260K: a greedy reply streams into the transcript
// with a live tok/s, then shows TTFT and the decode rate; the turn is in the store; stop ends a
// reply as cancelled; regenerate answers the same message again (greedy: the same text); a new
// page reopens the stored conversation. Stored history is rebuilt headless too.
#include <QtTest>

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QTextBrowser>

#include "engine/format/convert.h"
#include "engine/format/p64_reader.h"
#include "engine/lab/store.h"
#include "ui/core/chat_engine.h"
#include "ui/core/workbench.h"
#include "ui/panels/chat_panel.h"
#include "ui/panels/models_panel.h"
#include "ui/ui_test_support.h"

using namespace p64::ui;

class TestChatPanel : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QTemporaryDir settings_;

  // stories260K converted once into the test's folder and opened in the workbench
  void open_stories(Workbench& wb) {
    const QString model = dir_.filePath("stories260K.p64");
    if (!QFileInfo::exists(model))
      p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    wb.set_model(model, p64::open_p64(model.toStdString()));
  }
  static void on_one_cpu_thread(ChatPanel& panel) {
    panel.backend_box()->setCurrentText("cpu");
    panel.threads_box()->setValue(1);
  }

 private Q_SLOTS:
  void initTestCase() { test::isolate_settings(settings_); }

  void stored_messages_become_history() {
    auto msg = [](const char* role, const char* text) {
      p64::ChatMessageRecord m;
      m.role = role;
      m.content = text;
      return m;
    };
    std::string system;
    const auto h = history_from_stored({msg("system", "be brief"), msg("user", "hi"), msg("assistant", "first"),
                                        msg("assistant", "regenerated"), msg("user", "again")},
                                       &system);
    QCOMPARE(system, std::string("be brief"));
    QCOMPARE(h.size(), size_t{3});
    QCOMPARE(h[1].content, std::string("regenerated"));
    QCOMPARE(h[2].role, std::string("user"));
  }

  void chat_streams_stops_regenerates_and_reopens() {
    const QString model = dir_.filePath("stories260K.p64");
    p64::convert_to_p64(test::shared_model("stories260K.gguf").toStdString(), model.toStdString(), {});
    Workbench wb;
    wb.set_store_path(dir_.filePath("lab.db"));
    wb.set_model(model, p64::open_p64(model.toStdString()));
    auto panel = std::make_unique<ChatPanel>(wb);
    panel->show();
    panel->backend_box()->setCurrentText("cpu");
    panel->threads_box()->setValue(1);
    panel->temperature_box()->setValue(0);  // greedy: the same message gets the same reply
    panel->max_tokens_box()->setValue(24);

    QSignalSpy streamed(panel.get(), &ChatPanel::streamed);
    QSignalSpy finished(panel.get(), &ChatPanel::reply_finished);
    panel->input_edit()->setPlainText("Once upon a time");
    panel->send();
    QVERIFY(panel->replying());
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(panel->rate_label()->text()));
    QVERIFY(streamed.count() > 0);
    QString joined;
    for (const auto& args : streamed) joined += args.at(0).toString();
    const QString reply = panel->last_reply();
    QVERIFY(!reply.trimmed().isEmpty());
    QVERIFY(joined.contains(reply.trimmed().left(10)));  // the text arrived by streaming
    QVERIFY(panel->transcript()->toPlainText().contains(reply.trimmed()));
    QVERIFY(panel->rate_label()->text().contains("TTFT"));
    QVERIFY(panel->rate_label()->text().contains("tok/s"));
    QVERIFY(panel->turns().last().stats.contains("decode"));
    QVERIFY(panel->template_label()->text().startsWith("Template:"));

    const qint64 sid = panel->stored_session();
    QVERIFY(sid > 0);
    {
      auto store = p64::Store::open(wb.store_path().toStdString());
      const auto msgs = store->chat_messages(sid);
      QCOMPARE(msgs.size(), size_t{2});
      QCOMPARE(QString::fromStdString(msgs[0].content), QString("Once upon a time"));
      QCOMPARE(QString::fromStdString(msgs[1].content), reply);
      QVERIFY(msgs[1].tokens > 0);
      QVERIFY(msgs[1].decode_tok_s > 0);
    }

    // Regenerate: the same user text again; greedy gives the same reply; the store keeps both.
    finished.clear();
    panel->regenerate();
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
    QCOMPARE(panel->last_reply(), reply);
    QCOMPARE(panel->turns().size(), 2);
    QCOMPARE(p64::Store::open(wb.store_path().toStdString())->chat_messages(sid).size(), size_t{3});

    // Edit and resend: the message comes back to the input, its turn leaves the conversation.
    panel->edit_last();
    QCOMPARE(panel->input_edit()->toPlainText(), QString("Once upon a time"));
    QCOMPARE(panel->turns().size(), 0);
    finished.clear();
    panel->input_edit()->setPlainText("Once upon a time there was a cat");
    panel->send();
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
    QCOMPARE(panel->turns().size(), 2);
    QCOMPARE(panel->turns().first().text, QString("Once upon a time there was a cat"));

    // Stop right after sending: the reply ends as cancelled.
    finished.clear();
    panel->max_tokens_box()->setValue(4000);
    panel->input_edit()->setPlainText("Tell me a long story");
    panel->send();
    panel->stop();
    QVERIFY(test::wait_until([&] { return finished.count() > 0 && !panel->replying(); }, 120000));
    QCOMPARE(finished.first().at(1).toString(), QString(p64::stop_reason_name(p64::StopReason::Cancelled)));

    // Another page lists the stored conversation and reopens it.
    panel.reset();
    ChatPanel reopened(wb);
    QSignalSpy listed(&reopened, &ChatPanel::conversations_reloaded);
    QVERIFY(test::wait_until([&] { return listed.count() > 0; }, 30000));
    QCOMPARE(reopened.conversations()->count(), 1);
    QCOMPARE(reopened.conversations()->item(0)->data(Qt::UserRole).toLongLong(), sid);
    QSignalSpy opened(&reopened, &ChatPanel::conversation_opened);
    reopened.open_conversation(sid);
    QVERIFY(test::wait_until([&] { return opened.count() > 0; }, 30000));
    QVERIFY(reopened.transcript()->toPlainText().contains("Once upon a time"));
    QCOMPARE(reopened.last_reply().isEmpty(), false);
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  // On a 64-position context, replies that fill it: the meter shows the positions after every
  // turn, every next message is still answered, and the page says when the oldest turns went.
  void context_meter_and_full_context_policy() {
    Workbench wb;
    open_stories(wb);
    ChatPanel panel(wb);
    on_one_cpu_thread(panel);
    panel.temperature_box()->setValue(0);
    panel.context_box()->setValue(64);
    panel.max_tokens_box()->setValue(1000);  // until the context is full
    panel.system_edit()->setPlainText("Be kind.");
    QSignalSpy finished(&panel, &ChatPanel::reply_finished);
    const QStringList messages{"Tell me a story.", "And then?", "What next?"};
    for (const QString& m : messages) {
      finished.clear();
      panel.input_edit()->setPlainText(m);
      panel.send();
      QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
      QVERIFY2(finished.first().at(0).toBool(), qPrintable(panel.rate_label()->text()));
      static const QRegularExpression meter(R"(Context: (\d+) / 64 positions)");
      const QRegularExpressionMatch hit = meter.match(panel.context_label()->text());
      QVERIFY2(hit.hasMatch(), qPrintable(panel.context_label()->text()));
      QVERIFY(hit.captured(1).toInt() <= 64);
    }
    int notices = 0;
    for (const auto& t : panel.turns()) notices += t.role == "notice" ? 1 : 0;
    QVERIFY(notices > 0);
    QVERIFY(panel.transcript()->toPlainText().contains("context full: dropped"));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  // A message longer than the whole context is refused with the reason in sight, not run.
  void a_message_longer_than_the_context_is_refused() {
    Workbench wb;
    open_stories(wb);
    ChatPanel panel(wb);
    on_one_cpu_thread(panel);
    panel.context_box()->setValue(64);
    QSignalSpy finished(&panel, &ChatPanel::reply_finished);
    panel.input_edit()->setPlainText(QString("the cat sat on the mat ").repeated(30));
    panel.send();
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
    QCOMPARE(finished.first().at(0).toBool(), false);
    QVERIFY2(panel.rate_label()->text().contains("64 positions"), qPrintable(panel.rate_label()->text()));
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }

  // A .gguf opens as the CLI opens it: converted on the way into the p64 cache, with no
  // question and no .p64 written beside it; the chat then answers on it.
  void a_gguf_opens_and_chats_as_in_the_cli() {
    QTemporaryDir models;
    const QString gguf = models.filePath("stories260K.gguf");
    QVERIFY(QFile::copy(test::shared_model("stories260K.gguf"), gguf));
    Workbench wb;
    wb.set_backend("cpu");
    ModelsPanel opener(wb);
    opener.set_interactive(false);
    QSignalSpy opened(&opener, &ModelsPanel::opened);
    QSignalSpy failed(&opener, &ModelsPanel::open_failed);
    opener.open(gguf);
    QVERIFY(test::wait_until([&] { return opened.count() + failed.count() > 0; }, 120000));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QCOMPARE(wb.model_path(), gguf);
    QVERIFY(wb.model() != nullptr);
    QCOMPARE(QDir(models.path()).entryList(QDir::Files), QStringList{"stories260K.gguf"});

    ChatPanel panel(wb);
    panel.backend_box()->setCurrentText("cpu");
    panel.threads_box()->setValue(1);
    panel.temperature_box()->setValue(0);
    panel.max_tokens_box()->setValue(8);
    QSignalSpy finished(&panel, &ChatPanel::reply_finished);
    panel.input_edit()->setPlainText("Once upon a time");
    panel.send();
    QVERIFY(test::wait_until([&] { return finished.count() > 0; }, 120000));
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(panel.rate_label()->text()));
    QVERIFY(!panel.last_reply().trimmed().isEmpty());
    QVERIFY(test::wait_until([&] { return wb.jobs().isEmpty(); }, 30000));
  }
};

QTEST_MAIN(TestChatPanel)
#include "tst_chat_panel.moc"
