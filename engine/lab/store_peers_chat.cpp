// Store: peer diagnostics (llama-bench results) and chat sessions.
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"

namespace p64 {

int Store::insert_peer_results(const std::vector<PeerResult>& results) {
  sql::Transaction tx(db_);
  sql::Statement ins(db_,
                     "INSERT INTO peer_results (tool, source_file, model, model_type, quant, test, n_prompt, n_gen, "
                     "device, backends, n_threads, n_gpu_layers, flash_attn, avg_ts, stddev_ts, samples_ts, model_size, "
                     "build_commit, test_time, raw_json, imported_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                     "ON CONFLICT DO NOTHING");
  int added = 0;
  const std::string now = utc_now_iso();
  for (const auto& p : results) {
    ins.bind(1, p.tool).bind(2, p.source_file).bind(3, p.model).bind(4, p.model_type).bind(5, p.quant);
    ins.bind(6, p.test).bind(7, p.n_prompt).bind(8, p.n_gen).bind(9, p.device).bind(10, p.backends);
    ins.bind(11, p.n_threads).bind(12, p.n_gpu_layers).bind(13, p.flash_attn).bind(14, p.avg_ts);
    ins.bind(15, p.stddev_ts).bind(16, nlohmann::json(p.samples_ts).dump()).bind(17, p.model_size);
    ins.bind(18, p.build_commit).bind(19, p.test_time).bind(20, p.raw_json.empty() ? "{}" : p.raw_json).bind(21, now);
    ins.run();
    added += sqlite3_changes(db_);
    ins.reset();
  }
  tx.commit();
  return added;
}

std::vector<PeerResult> Store::peer_results(const PeerFilter& f) const {
  std::string q =
      "SELECT id, tool, source_file, model, model_type, quant, test, n_prompt, n_gen, device, backends, n_threads, "
      "n_gpu_layers, flash_attn, avg_ts, stddev_ts, samples_ts, model_size, build_commit, test_time, raw_json "
      "FROM peer_results WHERE 1 = 1";
  if (!f.model.empty()) q += " AND (model LIKE '%' || ?1 || '%' OR model_type LIKE '%' || ?1 || '%')";
  if (!f.device.empty()) q += " AND device LIKE '%' || ?2 || '%'";
  q += " ORDER BY id";
  sql::Statement s(db_, q);
  if (!f.model.empty()) s.bind(1, f.model);
  if (!f.device.empty()) s.bind(2, f.device);
  std::vector<PeerResult> out;
  while (s.step()) {
    PeerResult p;
    p.id = s.i64(0);
    p.tool = s.text(1);
    p.source_file = s.text(2);
    p.model = s.text(3);
    p.model_type = s.text(4);
    p.quant = s.text(5);
    p.test = s.text(6);
    p.n_prompt = static_cast<int32_t>(s.i64(7));
    p.n_gen = static_cast<int32_t>(s.i64(8));
    p.device = s.text(9);
    p.backends = s.text(10);
    p.n_threads = static_cast<int32_t>(s.i64(11));
    p.n_gpu_layers = static_cast<int32_t>(s.i64(12));
    p.flash_attn = s.i64(13) != 0;
    p.avg_ts = s.f64(14);
    p.stddev_ts = s.f64(15);
    const auto samples = nlohmann::json::parse(s.text(16), nullptr, /*allow_exceptions=*/false);
    if (samples.is_array())
      for (const auto& v : samples)
        if (v.is_number()) p.samples_ts.push_back(v.get<double>());
    p.model_size = static_cast<uint64_t>(s.i64(17));
    p.build_commit = s.text(18);
    p.test_time = s.text(19);
    p.raw_json = s.text(20);
    out.push_back(std::move(p));
  }
  return out;
}

int64_t Store::create_chat_session(const ChatSessionRecord& c) {
  sql::Statement ins(db_,
                     "INSERT INTO chat_sessions (model_id, backend, title, template_name, sampler_json, created_at) "
                     "VALUES (?,?,?,?,?,?)");
  ins.bind_id(1, c.model_id).bind(2, c.backend).bind(3, c.title).bind(4, c.template_name);
  ins.bind(5, c.sampler_json.empty() ? "{}" : c.sampler_json).bind(6, c.created_at.empty() ? utc_now_iso() : c.created_at);
  ins.run();
  return sqlite3_last_insert_rowid(db_);
}

int64_t Store::append_chat_message(const ChatMessageRecord& m) {
  sql::Transaction tx(db_);
  int32_t seq = m.seq;
  if (seq == 0) {
    sql::Statement next(db_, "SELECT COALESCE(max(seq), 0) + 1 FROM chat_messages WHERE session_id = ?");
    next.bind(1, m.session_id);
    next.step();
    seq = static_cast<int32_t>(next.i64(0));
  }
  sql::Statement ins(db_,
                     "INSERT INTO chat_messages (session_id, seq, role, content, tokens, decode_tok_s, created_at) "
                     "VALUES (?,?,?,?,?,?,?)");
  ins.bind(1, m.session_id).bind(2, seq).bind(3, m.role).bind(4, m.content).bind(5, m.tokens);
  ins.bind(6, m.decode_tok_s).bind(7, m.created_at.empty() ? utc_now_iso() : m.created_at).run();
  const int64_t id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return id;
}

std::vector<ChatSessionRecord> Store::chat_sessions() const {
  sql::Statement s(db_,
                   "SELECT id, model_id, backend, title, template_name, sampler_json, created_at FROM chat_sessions "
                   "ORDER BY id");
  std::vector<ChatSessionRecord> out;
  while (s.step()) {
    ChatSessionRecord c;
    c.id = s.i64(0);
    c.model_id = s.is_null(1) ? 0 : s.i64(1);
    c.backend = s.text(2);
    c.title = s.text(3);
    c.template_name = s.text(4);
    c.sampler_json = s.text(5);
    c.created_at = s.text(6);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<ChatMessageRecord> Store::chat_messages(int64_t session_id) const {
  sql::Statement s(db_,
                   "SELECT id, session_id, seq, role, content, tokens, decode_tok_s, created_at FROM chat_messages "
                   "WHERE session_id = ? ORDER BY seq");
  s.bind(1, session_id);
  std::vector<ChatMessageRecord> out;
  while (s.step()) {
    ChatMessageRecord m;
    m.id = s.i64(0);
    m.session_id = s.i64(1);
    m.seq = static_cast<int32_t>(s.i64(2));
    m.role = s.text(3);
    m.content = s.text(4);
    m.tokens = static_cast<int32_t>(s.i64(5));
    m.decode_tok_s = s.f64(6);
    m.created_at = s.text(7);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace p64
