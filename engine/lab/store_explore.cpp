// Store: explore matrices and the A/B run behind each of their cells.
#include "engine/lab/sqlite_util.h"
#include "engine/lab/store.h"

namespace p64 {
namespace {

ExploreRecord read_explore(const sql::Statement& s) {
  ExploreRecord e;
  e.id = s.i64(0);
  e.name = s.text(1);
  e.plan_json = s.text(2);
  e.created_at = s.text(3);
  return e;
}

}  // namespace

std::optional<ExploreRecord> Store::explore(const std::string& name) const {
  sql::Statement s(db_, "SELECT id, name, plan_json, created_at FROM explores WHERE name = ?");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_explore(s);
}

std::vector<ExploreRecord> Store::explores() const {
  sql::Statement s(db_, "SELECT id, name, plan_json, created_at FROM explores ORDER BY id");
  std::vector<ExploreRecord> out;
  while (s.step()) out.push_back(read_explore(s));
  return out;
}

int64_t Store::insert_explore(const std::string& name, const std::string& plan_json) {
  sql::Statement ins(db_, "INSERT INTO explores (name, plan_json, created_at) VALUES (?,?,?)");
  ins.bind(1, name).bind(2, plan_json).bind(3, utc_now_iso()).run();
  return sqlite3_last_insert_rowid(db_);
}

std::vector<ExploreCellRecord> Store::explore_cells(int64_t explore_id) const {
  sql::Statement s(db_,
                   "SELECT explore_id, model_index, set_index, run_id FROM explore_cells WHERE explore_id = ? "
                   "ORDER BY model_index, set_index");
  s.bind(1, explore_id);
  std::vector<ExploreCellRecord> out;
  while (s.step()) {
    ExploreCellRecord c;
    c.explore_id = s.i64(0);
    c.model_index = static_cast<int32_t>(s.i64(1));
    c.set_index = static_cast<int32_t>(s.i64(2));
    c.run_id = s.i64(3);
    out.push_back(c);
  }
  return out;
}

void Store::add_explore_cell(const ExploreCellRecord& c) {
  sql::Statement ins(db_, "INSERT INTO explore_cells (explore_id, model_index, set_index, run_id) VALUES (?,?,?,?)");
  ins.bind(1, c.explore_id).bind(2, c.model_index).bind(3, c.set_index).bind(4, c.run_id).run();
}

}  // namespace p64
