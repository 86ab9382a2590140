// Store: the optimisation registry and each switch's history of status changes.
#include "engine/common/error.h"
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"
#include "engine/runtime/backend.h"

namespace p64 {
namespace {

constexpr const char* kOptColumns =
    "id, name, backend, description, status, default_value, allowed_values, imported, updated_at";

OptimisationRecord read_opt(const sql::Statement& s) {
  OptimisationRecord o;
  o.id = s.i64(0);
  o.name = s.text(1);
  o.backend = s.text(2);
  o.description = s.text(3);
  o.status = opt_status_from_string(s.text(4));
  o.default_value = s.text(5);
  o.values = s.text(6);
  o.imported = s.i64(7) != 0;
  o.updated_at = s.text(8);
  return o;
}

}  // namespace

int64_t Store::upsert_optimisation(const OptimisationRecord& o) {
  // Description and values follow the backend; the status is only changed by record_status,
  // so a verdict is never silently undone by re-registering a switch.
  sql::Statement ins(db_,
                     "INSERT INTO optimisations (name, backend, description, status, default_value, allowed_values, "
                     "imported, updated_at) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(name, backend) DO UPDATE SET "
                     "description = excluded.description, default_value = excluded.default_value, "
                     "allowed_values = excluded.allowed_values");
  ins.bind(1, o.name).bind(2, o.backend).bind(3, o.description).bind(4, to_string(o.status));
  ins.bind(5, o.default_value).bind(6, o.values).bind(7, o.imported).bind(8, utc_now_iso()).run();
  sql::Statement find(db_, "SELECT id FROM optimisations WHERE name = ? AND backend = ?");
  find.bind(1, o.name).bind(2, o.backend);
  if (!find.step()) sql::fail(db_, "optimisation row vanished after insert");
  return find.i64(0);
}

void Store::sync_switches(const std::string& backend, const std::vector<SwitchInfo>& switches) {
  sql::Transaction tx(db_);
  for (const auto& sw : switches) {
    sql::Statement exists(db_, "SELECT 1 FROM optimisations WHERE name = ? AND backend = ?");
    exists.bind(1, sw.name).bind(2, backend);
    const bool known = exists.step();
    OptimisationRecord o;
    o.name = sw.name;
    o.backend = backend;
    o.description = sw.description;
    o.status = sw.status.empty() ? OptStatus::OptIn : opt_status_from_string(sw.status);
    o.default_value = sw.default_value;
    o.values = sw.values();
    const int64_t id = upsert_optimisation(o);
    if (!known) {
      sql::Statement h(db_,
                       "INSERT INTO optimisation_history (optimisation_id, at, old_status, new_status, reason) "
                       "VALUES (?, ?, NULL, ?, ?)");
      h.bind(1, id).bind(2, utc_now_iso()).bind(3, to_string(o.status));
      h.bind(4, "registered by the " + backend + " backend").run();
    }
  }
  tx.commit();
}

std::vector<OptimisationRecord> Store::optimisations(const OptimisationFilter& f) const {
  std::string q = std::string("SELECT ") + kOptColumns + " FROM optimisations WHERE 1 = 1";
  if (f.status) q += " AND status = ?1";
  if (!f.backend.empty()) q += " AND backend = ?2";
  q += " ORDER BY backend, name";
  sql::Statement s(db_, q);
  if (f.status) s.bind(1, to_string(*f.status));
  if (!f.backend.empty()) s.bind(2, f.backend);
  std::vector<OptimisationRecord> out;
  while (s.step()) out.push_back(read_opt(s));
  return out;
}

std::vector<OptimisationRecord> Store::find_optimisations(const std::string& name) const {
  sql::Statement s(db_, std::string("SELECT ") + kOptColumns + " FROM optimisations WHERE name = ? ORDER BY backend");
  s.bind(1, name);
  std::vector<OptimisationRecord> out;
  while (s.step()) out.push_back(read_opt(s));
  return out;
}

std::vector<OptimisationHistoryEntry> Store::optimisation_history(int64_t optimisation_id) const {
  sql::Statement s(db_,
                   "SELECT id, optimisation_id, at, old_status, new_status, reason, evidence_run_id, evidence, imported "
                   "FROM optimisation_history WHERE optimisation_id = ? ORDER BY at, id");
  s.bind(1, optimisation_id);
  std::vector<OptimisationHistoryEntry> out;
  while (s.step()) {
    OptimisationHistoryEntry e;
    e.id = s.i64(0);
    e.optimisation_id = s.i64(1);
    e.at = s.text(2);
    if (!s.is_null(3)) e.old_status = opt_status_from_string(s.text(3));
    e.new_status = opt_status_from_string(s.text(4));
    e.reason = s.text(5);
    e.evidence_run_id = s.is_null(6) ? 0 : s.i64(6);
    e.evidence = s.text(7);
    e.imported = s.i64(8) != 0;
    out.push_back(std::move(e));
  }
  return out;
}

void Store::record_status(int64_t optimisation_id, OptStatus new_status, const std::string& reason,
                          int64_t evidence_run_id, const std::string& evidence, bool imported,
                          const std::string& at) {
  sql::Transaction tx(db_);
  sql::Statement cur(db_, "SELECT status FROM optimisations WHERE id = ?");
  cur.bind(1, optimisation_id);
  if (!cur.step()) throw Error(path_ + ": no optimisation with id " + std::to_string(optimisation_id));
  const std::string old = cur.text(0);
  const std::string now = at.empty() ? utc_now_iso() : at;
  sql::Statement h(db_,
                   "INSERT INTO optimisation_history (optimisation_id, at, old_status, new_status, reason, "
                   "evidence_run_id, evidence, imported) VALUES (?,?,?,?,?,?,?,?)");
  h.bind(1, optimisation_id).bind(2, now).bind(3, old).bind(4, to_string(new_status)).bind(5, reason);
  h.bind_id(6, evidence_run_id).bind(7, evidence).bind(8, imported).run();
  sql::Statement up(db_, "UPDATE optimisations SET status = ?, updated_at = ? WHERE id = ?");
  up.bind(1, to_string(new_status)).bind(2, utc_now_iso()).bind(3, optimisation_id).run();
  tx.commit();
}

}  // namespace p64
