#pragma once
// The chat behind the Chat page, worker-side: a Session (model loaded into a backend) with a
// ChatSession over it, kept between turns so each turn reuses the KV cache; each turn can be
// written to the store's chat tables. Used by one thread at a time (the page runs one turn at a
// time on a Job); nothing here touches Qt widgets.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/lab/store_types.h"
#include "engine/runtime/chat_session.h"
#include "engine/runtime/session.h"

namespace p64 {
class Model;
class Store;
}

namespace p64::ui {

struct ChatConfig {
  std::string model_path;
  std::shared_ptr<const Model> model;  // the open model when it is that file; else opened here
  std::string backend = "auto";
  uint32_t threads = 0;
  uint32_t max_context = 4096;  // KV positions, capped by the model's trained context (the CLI's --ctx)
  bool same_engine(const ChatConfig& o) const {
    return model_path == o.model_path && backend == o.backend && threads == o.threads && max_context == o.max_context;
  }
};

class ChatEngine {
 public:
  explicit ChatEngine(const ChatConfig& config);  // loads the model into the backend (slow)
  const ChatConfig& config() const { return config_; }
  const std::string& backend_name() const { return backend_name_; }
  ChatSession& chat() { return *chat_; }
  std::string template_name() const { return chat_->chat_template().family_name(); }

  int64_t stored_session = 0;  // the store's chat session this conversation is written to

 private:
  ChatConfig config_;
  std::string backend_name_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<ChatSession> chat_;
};

struct ChatTurnRequest {
  std::string user_text;
  std::string system;
  GenerateOptions options;
  bool regenerate = false;  // drop the last user + assistant turn and answer that user text again
  std::string store_path;   // empty = keep nothing
  std::string sampler_json; // kept with a new stored session
};

struct ChatTurnResult {
  std::string user_text;
  GenerateResult reply;
  ChatSession::ContextFit fit;      // what the context policy did before the reply
  ChatSession::ContextUse context;  // the meter after it
  int64_t session_id = 0;  // 0 when not stored
};

// One turn: the reply streamed through `stream`; then (with a store) the session is created on
// its first turn (with the system prompt as message 0) and the user and assistant messages are
// appended. Throws p64::Error when regenerating with no turn to redo.
ChatTurnResult run_chat_turn(ChatEngine& engine, const ChatTurnRequest& request, const StreamFn& stream);

// A stored conversation as ChatSession history: the system prompt is returned apart and, where
// a reply was regenerated (two assistant messages in a row), the later one is kept.
std::vector<ChatMessage> history_from_stored(const std::vector<ChatMessageRecord>& messages, std::string* system);

// A stored conversation, ready to continue.
struct StoredConversation {
  int64_t id = 0;
  std::vector<ChatMessage> history;
  std::string system;
};
StoredConversation load_conversation(Store& store, int64_t session_id);
// The store's conversations, oldest first.
std::vector<ChatSessionRecord> stored_conversations(Store& store);

}  // namespace p64::ui
