#pragma once
// Checks on a lab store that tests share.
#include <string>

#include "engine/lab/store.h"

namespace p64::test {

// Store options for a test's own store: without the seed plan's imported history, so the test
// sees only the runs it writes.
inline Store::Options without_plan_history() {
  Store::Options o;
  o.import_plan_history = false;
  return o;
}

// The first row of PRAGMA integrity_check ("ok" for a sound store).
std::string integrity_check(Store& store);

}  // namespace p64::test
