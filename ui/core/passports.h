#pragma once
// A backend's passport as the workbench gets it: measured now (seconds of bandwidth and compute
// runs on the device), or the newest one a stored run carries.
#include <QString>

#include <cstdint>
#include <optional>
#include <string>

#include "engine/common/progress.h"
#include "engine/runtime/passport.h"

namespace p64 {
class Store;
}

namespace p64::ui {

struct MeasuredPassport {
  Passport passport;
  QString nvml_line;  // a CUDA device's name, power limit, clocks and throttling; empty elsewhere
};
// Creates `backend` and measures its passport (on a worker thread: it takes seconds).
MeasuredPassport measure_passport(const QString& backend, const ProgressFn& progress);

// The passport run `passport_id` points at (RunRecord::passport_id), as this build reads it;
// empty for 0, a missing record or one this build cannot read.
std::optional<Passport> stored_passport(Store& store, int64_t passport_id);

struct StoredPassport {
  int64_t run_id = 0;
  std::string at;
  Passport passport;
};
// The newest passport with a measured bandwidth that a run on `backend` stored: the one the
// Roofline draws that run against.
std::optional<StoredPassport> latest_stored_passport(Store& store, const std::string& backend);

}  // namespace p64::ui
