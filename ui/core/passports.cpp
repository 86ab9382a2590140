#include "ui/core/passports.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/lab/gpu_facts.h"
#include "engine/lab/store.h"
#include "engine/runtime/backend_registry.h"

namespace p64::ui {

MeasuredPassport measure_passport(const QString& backend, const ProgressFn& progress) {
  progress(0.0, "creating the backend");
  auto b = create_backend(backend.toStdString());
  progress(0.2, "measuring bandwidth");
  MeasuredPassport m;
  m.passport = b->passport();
  // As `p64 passport` prints it.
  if (const auto gpu = read_gpu_facts(m.passport.device)) m.nvml_line = QString::fromStdString(gpu_facts_line(*gpu));
  progress(1.0, "done");
  return m;
}

std::optional<Passport> stored_passport(Store& store, int64_t passport_id) {
  if (!passport_id) return std::nullopt;
  const auto rec = store.passport(passport_id);
  const auto j = nlohmann::json::parse(rec ? rec->json : "", nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    return j.get<Passport>();
  } catch (const std::exception&) {  // written by a build whose passport this one cannot read
    return std::nullopt;
  }
}

std::optional<StoredPassport> latest_stored_passport(Store& store, const std::string& backend) {
  RunFilter f;
  f.backend = backend;
  f.include_imported = false;
  std::vector<RunRecord> runs = store.runs(f);
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.id > b.id; });
  for (const RunRecord& r : runs) {
    // a run without one, or one this build cannot read: look further back
    if (auto p = stored_passport(store, r.passport_id); p && p->measured.read_gbs > 0)
      return StoredPassport{r.id, r.started_at, std::move(*p)};
  }
  return std::nullopt;
}

}  // namespace p64::ui
