#include "engine/lab/plan_history.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"

namespace p64 {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

}  // namespace

bool import_plan_history_once(Store& store) {
  constexpr const char* kKey = kPlanHistoryMetaKey;
  sql::Transaction tx(store.handle());
  if (store.meta(kKey)) return false;  // another process may have imported it meanwhile
  const nlohmann::json j = nlohmann::json::parse(embedded_plan_history_json());
  const std::string date = j.value("date", "");

  Passport passport = j.at("passport").get<Passport>();
  const int64_t passport_id = store.upsert_passport(passport, /*imported=*/true);

  const auto& jm = j.at("model");
  ModelRecord m;
  m.path = jm.value("path", "");
  m.sha256 = "";  // the plan does not record the file's hash
  m.name = jm.value("name", "");
  m.arch = jm.value("arch", "llama");
  m.n_layer = jm.value("n_layer", 0u);
  m.n_embd = jm.value("n_embd", 0u);
  m.n_head = jm.value("n_head", 0u);
  m.n_head_kv = jm.value("n_head_kv", 0u);
  m.n_ff = jm.value("n_ff", 0u);
  m.n_vocab = jm.value("n_vocab", 0u);
  m.dtypes = jm.value("dtypes", "");
  m.header_json = nlohmann::json{{"imported_from", j.value("source", "")}}.dump();
  m.added_at = date;
  const int64_t model_id = store.upsert_model(m);

  int rep_stage = 0;
  for (const auto& st : j.at("scoreboard")) {
    RunBundle b;
    b.run.kind = RunKind::DecodeProxy;
    b.run.status = RunStatus::Ok;
    b.run.model_id = model_id;
    b.run.passport_id = passport_id;
    b.run.backend = passport.device.backend;
    b.run.device = passport.device.name;
    b.run.config = j.value("command", "");
    b.run.label = st.at("stage").get<std::string>();
    b.run.imported = true;
    b.run.started_at = date;
    b.run.finished_at = date;
    std::vector<double> tok = st.at("decode_tok_s").get<std::vector<double>>();
    nlohmann::json summary = {{"decode_tok_s", {{"min", *std::min_element(tok.begin(), tok.end())},
                                                {"median", median_of(tok)},
                                                {"max", *std::max_element(tok.begin(), tok.end())}}},
                              {"rejected", st.value("rejected", false)},
                              {"order", rep_stage++}};
    b.run.summary_json = summary.dump();
    b.run.params_json = nlohmann::json{{"tokens", 32}}.dump();
    for (size_t i = 0; i < tok.size(); ++i) {
      SampleRecord s;
      s.rep = static_cast<int32_t>(i);
      s.decode_tokens = 32;
      s.decode_tok_s = tok[i];
      b.samples.push_back(s);
    }
    store.write_run(std::move(b));
  }

  std::vector<PeerResult> peers;
  for (const auto& p : j.value("peers", nlohmann::json::array())) {
    PeerResult r;
    r.tool = p.value("tool", "");
    r.source_file = std::string(kPlanHistorySource);
    r.model = p.value("model", "");
    r.model_type = p.value("model_type", "");
    r.quant = p.value("quant", "");
    r.test = p.value("test", "");
    r.n_prompt = p.value("n_prompt", 0);
    r.n_gen = p.value("n_gen", 0);
    r.device = p.value("device", "");
    r.backends = p.value("backends", "");
    r.avg_ts = p.value("avg_ts", 0.0);
    r.test_time = date;
    r.raw_json = p.dump();
    peers.push_back(std::move(r));
  }
  store.insert_peer_results(peers);

  for (const auto& o : j.at("optimisations")) {
    OptimisationRecord rec;
    rec.name = o.at("name").get<std::string>();
    rec.backend = o.value("backend", "wgpu");
    rec.description = o.value("description", "");
    if (const std::string env = o.value("env", ""); !env.empty()) rec.description += " [opt-in: " + env + "]";
    rec.imported = true;
    const auto& hist = o.at("history");
    // The first entry's "from" is where the switch started (candidate for the experiments).
    rec.status = opt_status_from_string(hist.empty() ? o.value("status", "opt-in")
                                                     : hist.front().value("from", hist.front().value("to", "opt-in")));
    const int64_t id = store.upsert_optimisation(rec);
    for (const auto& h : hist) {
      std::string evidence = h.value("evidence", "");
      nlohmann::json facts = nlohmann::json::object();
      if (h.contains("a_tok_s")) facts["a_tok_s"] = h["a_tok_s"];
      if (h.contains("b_tok_s")) facts["b_tok_s"] = h["b_tok_s"];
      if (!facts.empty()) evidence += " " + facts.dump();
      store.record_status(id, opt_status_from_string(h.at("to").get<std::string>()), h.value("reason", ""), 0, evidence,
                          /*imported=*/true, h.value("at", date));
    }
  }
  store.set_meta(kKey, utc_now_iso());
  tx.commit();
  return true;
}

}  // namespace p64
