#include "ui/core/chat_engine.h"

#include "engine/common/error.h"
#include "engine/lab/lab_run.h"
#include "engine/lab/store.h"
#include "engine/model/model.h"
#include "engine/runtime/backend_registry.h"

namespace p64::ui {

ChatEngine::ChatEngine(const ChatConfig& config) : config_(config) {
  std::shared_ptr<const Model> model = config.model;
  if (!model || model->source() != config.model_path) {
    if (config.model_path.empty()) throw Error("no model: open one in the Models panel first");
    model = open_lab_model(config.model_path, config.backend);
  }
  config_.model = model;
  backend_name_ = resolve_backend_name(config.backend);
  SessionOptions so;
  so.backend = backend_name_;
  so.threads = config.threads;
  so.max_context = config.max_context;
  session_ = Session::create(model, so);
  chat_ = std::make_unique<ChatSession>(*session_);
}

ChatTurnResult run_chat_turn(ChatEngine& engine, const ChatTurnRequest& req, const StreamFn& stream) {
  ChatSession& chat = engine.chat();
  chat.set_system(req.system);
  ChatTurnResult out;
  out.user_text = req.user_text;
  if (req.regenerate) {
    auto h = chat.history();
    if (h.size() < 2 || h.back().role != "assistant" || h[h.size() - 2].role != "user")
      throw Error("nothing to regenerate: the conversation has no reply yet");
    out.user_text = h[h.size() - 2].content;
    h.resize(h.size() - 2);
    chat.set_history(std::move(h));
  }
  out.reply = chat.reply(out.user_text, req.options, stream);
  out.fit = chat.last_fit();
  out.context = chat.context_use();
  if (req.store_path.empty()) return out;

  auto store = Store::open(req.store_path);
  if (engine.stored_session == 0) {
    ChatSessionRecord s;
    s.model_id = store->upsert_model(store->describe_model(*engine.config().model, engine.config().model_path));
    s.backend = engine.backend_name();
    s.title = out.user_text.substr(0, 60);
    s.template_name = engine.template_name();
    s.sampler_json = req.sampler_json;
    engine.stored_session = store->create_chat_session(s);
    if (!req.system.empty()) {
      ChatMessageRecord m;
      m.session_id = engine.stored_session;
      m.role = "system";
      m.content = req.system;
      store->append_chat_message(m);
    }
  }
  if (!req.regenerate) {
    ChatMessageRecord u;
    u.session_id = engine.stored_session;
    u.role = "user";
    u.content = out.user_text;
    store->append_chat_message(u);
  }
  ChatMessageRecord a;
  a.session_id = engine.stored_session;
  a.role = "assistant";
  a.content = out.reply.text;
  a.tokens = out.reply.stats.generated_tokens;
  a.decode_tok_s = out.reply.stats.decode_tok_s();
  store->append_chat_message(a);
  out.session_id = engine.stored_session;
  return out;
}

std::vector<ChatMessage> history_from_stored(const std::vector<ChatMessageRecord>& messages, std::string* system) {
  std::vector<ChatMessage> h;
  for (const auto& m : messages) {
    if (m.role == "system") {
      if (system) *system = m.content;
      continue;
    }
    if (m.role == "assistant" && !h.empty() && h.back().role == "assistant") {
      h.back().content = m.content;  // a regenerated reply replaces the one before it
      continue;
    }
    h.push_back(ChatMessage{m.role, m.content});
  }
  return h;
}

StoredConversation load_conversation(Store& store, int64_t session_id) {
  StoredConversation c;
  c.id = session_id;
  c.history = history_from_stored(store.chat_messages(session_id), &c.system);
  return c;
}

std::vector<ChatSessionRecord> stored_conversations(Store& store) { return store.chat_sessions(); }

}  // namespace p64::ui
