#include "support/device_fault_scenario.h"

#include <sqlite3.h>

namespace p64::test {

int64_t write_run_before_fault(Store& store, const std::string& backend) {
  RunBundle kept;
  kept.run.kind = RunKind::DecodeProxy;
  kept.run.backend = backend;
  kept.run.label = "before the fault";
  return store.write_run(kept);
}

DecodeProxyParams three_short_runs() {
  DecodeProxyParams p;
  p.decode_tokens = 8;
  p.prompt_tokens = 4;
  p.runs = 3;
  p.warmup = 0;
  p.warm_repeats = 0;
  return p;
}

std::string integrity_check(Store& store) {
  sqlite3_stmt* st = nullptr;
  std::string verdict = "PRAGMA integrity_check could not run";
  if (sqlite3_prepare_v2(store.handle(), "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    verdict = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return verdict;
}

}  // namespace p64::test
