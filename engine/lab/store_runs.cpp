// Store: runs, their samples, timeline ops and A/B comparisons.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/common/error.h"
#include "engine/lab/run_uid.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"

namespace p64 {
namespace {

constexpr const char* kRunColumns =
    "r.id, r.kind, r.status, r.model_id, r.passport_id, r.backend, r.device, r.config, r.options_json, "
    "r.params_json, r.summary_json, r.git_revision, r.started_at, r.finished_at, r.label, r.imported, r.error, r.uid";

RunRecord read_run(const sql::Statement& s) {
  RunRecord r;
  r.id = s.i64(0);
  r.kind = run_kind_from_string(s.text(1));
  r.status = run_status_from_string(s.text(2));
  r.model_id = s.is_null(3) ? 0 : s.i64(3);
  r.passport_id = s.is_null(4) ? 0 : s.i64(4);
  r.backend = s.text(5);
  r.device = s.text(6);
  r.config = s.text(7);
  r.options_json = s.text(8);
  r.params_json = s.text(9);
  r.summary_json = s.text(10);
  r.git_revision = s.text(11);
  r.started_at = s.text(12);
  r.finished_at = s.text(13);
  r.label = s.text(14);
  r.imported = s.i64(15) != 0;
  r.error = s.text(16);
  r.uid = s.text(17);
  return r;
}

constexpr const char* kComparisonColumns =
    "id, run_id, switch_name, backend, model_id, device, config_a, config_b, a_median, b_median, ratio_median, "
    "ratio_min, ratio_max, quality_pass, quality_json, verdict, reason, created_at";

ComparisonRecord read_comparison(const sql::Statement& s) {
  ComparisonRecord c;
  c.id = s.i64(0);
  c.run_id = s.i64(1);
  c.switch_name = s.text(2);
  c.backend = s.text(3);
  c.model_id = s.is_null(4) ? 0 : s.i64(4);
  c.device = s.text(5);
  c.config_a = s.text(6);
  c.config_b = s.text(7);
  c.a_median = s.f64(8);
  c.b_median = s.f64(9);
  c.ratio_median = s.f64(10);
  c.ratio_min = s.f64(11);
  c.ratio_max = s.f64(12);
  c.quality_pass = s.i64(13) != 0;
  c.quality_json = s.text(14);
  c.verdict = verdict_from_string(s.text(15));
  c.reason = s.text(16);
  c.created_at = s.text(17);
  return c;
}

std::string or_empty_json(const std::string& s) { return s.empty() ? "{}" : s; }

}  // namespace

int64_t Store::write_run(RunBundle b) {
  sql::Transaction tx(db_);
  const int64_t id = insert_run_rows(b);
  tx.commit();
  return id;
}

int64_t Store::insert_run_rows(const RunBundle& b) {
  RunRecord r = b.run;
  if (b.model) r.model_id = upsert_model(*b.model);
  if (b.passport) {
    r.passport_id = upsert_passport(*b.passport);
    if (r.device.empty()) r.device = b.passport->device.name;
  }
  if (r.started_at.empty()) r.started_at = utc_now_iso();
  if (r.finished_at.empty() && r.status != RunStatus::Running) r.finished_at = utc_now_iso();
  sql::Statement ins(db_,
                     "INSERT INTO runs (kind, status, model_id, passport_id, backend, device, config, options_json, "
                     "params_json, summary_json, git_revision, started_at, finished_at, label, imported, error, uid) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, to_string(r.kind)).bind(2, to_string(r.status)).bind_id(3, r.model_id).bind_id(4, r.passport_id);
  ins.bind(5, r.backend).bind(6, r.device).bind(7, r.config).bind(8, or_empty_json(r.options_json));
  ins.bind(9, or_empty_json(r.params_json)).bind(10, or_empty_json(r.summary_json)).bind(11, r.git_revision);
  ins.bind(12, r.started_at).bind(13, r.finished_at).bind(14, r.label).bind(15, r.imported).bind(16, r.error);
  // An imported run is the same run in every store that imports it: its uid comes from its content.
  if (r.uid.empty() && !r.imported) r.uid = random_run_uid();
  if (r.uid.empty()) ins.bind_null(17); else ins.bind(17, r.uid);
  ins.run();
  const int64_t run_id = sqlite3_last_insert_rowid(db_);
  if (r.uid.empty()) assign_content_run_uid(db_, run_id);

  sql::Statement sample(db_,
                        "INSERT INTO samples (run_id, rep, side, warm, prompt_tokens, decode_tokens, decode_tok_s, "
                        "prefill_tok_s, ttft_ms, effective_gbs, bandwidth_share, peak_device_bytes) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& s : b.samples) {
    sample.bind(1, run_id).bind(2, s.rep).bind(3, s.side).bind(4, s.warm).bind(5, s.prompt_tokens);
    sample.bind(6, s.decode_tokens).bind(7, s.decode_tok_s).bind(8, s.prefill_tok_s).bind(9, s.ttft_ms);
    sample.bind(10, s.effective_gbs).bind(11, s.bandwidth_share).bind(12, s.peak_device_bytes);
    sample.run();
    sample.reset();
  }
  sql::Statement op(db_,
                    "INSERT INTO timeline_ops (run_id, name, op_group, layer, prefill, step, start_us, dur_us, bytes, flops) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& o : b.ops) {
    op.bind(1, run_id).bind(2, o.name).bind(3, op_group_name(o.group)).bind(4, o.layer).bind(5, o.prefill);
    op.bind(6, o.step).bind(7, o.start_us).bind(8, o.dur_us).bind(9, o.bytes).bind(10, o.flops);
    op.run();
    op.reset();
  }
  if (b.comparison) {
    const ComparisonRecord& c = *b.comparison;
    sql::Statement cmp(db_,
                       "INSERT INTO comparisons (run_id, switch_name, backend, model_id, device, config_a, config_b, "
                       "a_median, b_median, ratio_median, ratio_min, ratio_max, quality_pass, quality_json, verdict, "
                       "reason, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    cmp.bind(1, run_id).bind(2, c.switch_name).bind(3, c.backend).bind_id(4, c.model_id ? c.model_id : r.model_id);
    cmp.bind(5, c.device.empty() ? r.device : c.device).bind(6, c.config_a).bind(7, c.config_b);
    cmp.bind(8, c.a_median).bind(9, c.b_median).bind(10, c.ratio_median).bind(11, c.ratio_min);
    cmp.bind(12, c.ratio_max).bind(13, c.quality_pass).bind(14, or_empty_json(c.quality_json));
    cmp.bind(15, to_string(c.verdict)).bind(16, c.reason).bind(17, c.created_at.empty() ? utc_now_iso() : c.created_at);
    cmp.run();
  }
  return run_id;
}

std::vector<RunRecord> Store::runs(const RunFilter& f) const {
  std::string q = std::string("SELECT ") + kRunColumns +
                  " FROM runs r LEFT JOIN models m ON m.id = r.model_id WHERE 1 = 1";
  if (!f.model.empty()) q += " AND (m.path LIKE '%' || ?1 || '%' OR m.name LIKE '%' || ?1 || '%' OR m.sha256 LIKE ?1 || '%')";
  if (f.kind) q += " AND r.kind = ?2";
  if (!f.backend.empty()) q += " AND r.backend = ?3";
  if (!f.include_imported) q += " AND r.imported = 0";
  q += " ORDER BY r.id";
  if (f.limit > 0) q += " DESC LIMIT " + std::to_string(f.limit);
  sql::Statement s(db_, q);
  if (!f.model.empty()) s.bind(1, f.model);
  if (f.kind) s.bind(2, to_string(*f.kind));
  if (!f.backend.empty()) s.bind(3, f.backend);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  if (f.limit > 0) std::reverse(out.begin(), out.end());
  return out;
}

std::optional<RunRecord> Store::run(int64_t id) const {
  sql::Statement s(db_, std::string("SELECT ") + kRunColumns + " FROM runs r WHERE r.id = ?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::optional<int64_t> Store::latest_run_id(RunKind kind, int64_t model_id) const {
  sql::Statement s(db_, model_id ? "SELECT max(id) FROM runs WHERE kind = ? AND status = 'ok' AND model_id = ?"
                                 : "SELECT max(id) FROM runs WHERE kind = ? AND status = 'ok'");
  s.bind(1, to_string(kind));
  if (model_id) s.bind(2, model_id);
  if (!s.step() || s.is_null(0)) return std::nullopt;
  return s.i64(0);
}

std::vector<SampleRecord> Store::samples(int64_t run_id) const {
  sql::Statement s(db_,
                   "SELECT id, run_id, rep, side, warm, prompt_tokens, decode_tokens, decode_tok_s, prefill_tok_s, "
                   "ttft_ms, effective_gbs, bandwidth_share, peak_device_bytes FROM samples WHERE run_id = ? ORDER BY rep, id");
  s.bind(1, run_id);
  std::vector<SampleRecord> out;
  while (s.step()) {
    SampleRecord r;
    r.id = s.i64(0);
    r.run_id = s.i64(1);
    r.rep = static_cast<int32_t>(s.i64(2));
    r.side = s.text(3);
    r.warm = s.i64(4) != 0;
    r.prompt_tokens = static_cast<int32_t>(s.i64(5));
    r.decode_tokens = static_cast<int32_t>(s.i64(6));
    r.decode_tok_s = s.f64(7);
    r.prefill_tok_s = s.f64(8);
    r.ttft_ms = s.f64(9);
    r.effective_gbs = s.f64(10);
    r.bandwidth_share = s.f64(11);
    r.peak_device_bytes = static_cast<uint64_t>(s.i64(12));
    out.push_back(r);
  }
  return out;
}

std::vector<TimelineOpRecord> Store::timeline_ops(int64_t run_id) const {
  sql::Statement s(db_,
                   "SELECT run_id, name, op_group, layer, prefill, step, start_us, dur_us, bytes, flops FROM timeline_ops "
                   "WHERE run_id = ? ORDER BY id");
  s.bind(1, run_id);
  std::vector<TimelineOpRecord> out;
  while (s.step()) {
    TimelineOpRecord r;
    r.run_id = s.i64(0);
    r.name = s.text(1);
    r.group = s.text(2);
    r.layer = static_cast<int32_t>(s.i64(3));
    r.prefill = s.i64(4) != 0;
    r.step = static_cast<int32_t>(s.i64(5));
    r.start_us = s.f64(6);
    r.dur_us = s.f64(7);
    r.bytes = static_cast<uint64_t>(std::max<int64_t>(0, s.i64(8)));
    r.flops = std::max(0.0, s.f64(9));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ComparisonRecord> Store::comparisons(const std::string& switch_name, int64_t model_id) const {
  std::string q = std::string("SELECT ") + kComparisonColumns + " FROM comparisons WHERE 1 = 1";
  if (!switch_name.empty()) q += " AND switch_name = ?1";
  if (model_id) q += " AND model_id = ?2";
  q += " ORDER BY id";
  sql::Statement s(db_, q);
  if (!switch_name.empty()) s.bind(1, switch_name);
  if (model_id) s.bind(2, model_id);
  std::vector<ComparisonRecord> out;
  while (s.step()) out.push_back(read_comparison(s));
  return out;
}

std::optional<ComparisonRecord> Store::comparison_for_run(int64_t run_id) const {
  sql::Statement s(db_, std::string("SELECT ") + kComparisonColumns + " FROM comparisons WHERE run_id = ?");
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return read_comparison(s);
}

std::optional<ComparisonRecord> Store::previous_comparison(const std::string& switch_name, int64_t model_id,
                                                           const std::string& device) const {
  sql::Statement s(db_, std::string("SELECT ") + kComparisonColumns +
                            " FROM comparisons WHERE switch_name = ? AND model_id IS ? AND device = ? "
                            "ORDER BY id DESC LIMIT 1");
  s.bind(1, switch_name).bind_id(2, model_id).bind(3, device);
  if (!s.step()) return std::nullopt;
  return read_comparison(s);
}

}  // namespace p64
