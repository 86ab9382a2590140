#include "engine/lab/run_uid.h"

#include <cstdio>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/lab/sha256.h"
#include "engine/lab/sqlite_util.h"

namespace p64 {

std::string random_run_uid() {
  std::random_device rd;
  std::string uid = "r-";
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(rd()));
    uid += part;
  }
  return uid;
}

void assign_content_run_uid(sqlite3* db, int64_t run_id) {
  // Every column that a copy of the run keeps (not the row ids, which differ between stores),
  // and the machine its passport names: not the passport's fingerprint, which changes whenever
  // a build adds a field to the passport (the plan history's runs, imported by every build).
  sql::Statement s(db,
                   "SELECT r.kind, r.status, r.backend, r.device, r.config, r.options_json, r.params_json, "
                   "r.summary_json, r.git_revision, r.started_at, r.finished_at, r.label, r.imported, r.error, "
                   "COALESCE(m.sha256, ''), COALESCE(p.backend, ''), COALESCE(p.device_name, ''), "
                   "COALESCE(p.host_cpu, '') FROM runs r "
                   "LEFT JOIN models m ON m.id = r.model_id LEFT JOIN passports p ON p.id = r.passport_id "
                   "WHERE r.id = ?");
  s.bind(1, run_id);
  if (!s.step()) sql::fail(db, "no run " + std::to_string(run_id) + " to give a uid");
  nlohmann::json content = nlohmann::json::array();
  for (int col = 0; col < 18; ++col) content.push_back(col == 12 ? nlohmann::json(s.i64(col)) : nlohmann::json(s.text(col)));
  const std::string text = content.dump();
  const std::string key = "c-" + sha256_hex(text.data(), text.size()).substr(0, 32);
  sql::Statement taken(db, "SELECT 1 FROM runs WHERE uid = ? AND id <> ?");
  std::string uid = key;
  for (int n = 2;; ++n) {
    taken.bind(1, uid).bind(2, run_id);
    const bool used = taken.step();
    taken.reset();
    if (!used) break;
    uid = key + "-" + std::to_string(n);
  }
  sql::Statement set(db, "UPDATE runs SET uid = ? WHERE id = ?");
  set.bind(1, uid).bind(2, run_id).run();
}

void assign_missing_run_uids(sqlite3* db) {
  std::vector<int64_t> without;
  {
    sql::Statement s(db, "SELECT id FROM runs WHERE uid IS NULL OR uid = '' ORDER BY id");
    while (s.step()) without.push_back(s.i64(0));
  }
  for (const int64_t id : without) assign_content_run_uid(db, id);
}

}  // namespace p64
