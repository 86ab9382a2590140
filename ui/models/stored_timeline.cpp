#include "ui/models/stored_timeline.h"

#include <algorithm>

#include "engine/lab/store.h"
#include "engine/lab/timeline_run.h"
#include "ui/core/passports.h"

namespace p64::ui {

std::vector<RunRecord> stored_timeline_runs(Store& store) {
  RunFilter f;
  f.kind = RunKind::Timeline;
  std::vector<RunRecord> runs = store.runs(f);
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.id > b.id; });
  return runs;
}

StoredTimeline load_stored_timeline(Store& store, int64_t run_id) {
  StoredTimeline t;
  t.run_id = run_id;
  t.spans = spans_from_records(store.timeline_ops(run_id));
  if (auto r = store.run(run_id)) {
    t.run = *r;
    if (const auto passport = stored_passport(store, r->passport_id)) {
      t.read_gbs = passport->measured.read_gbs;
      t.compute = stored_compute_ceiling(*passport);
    }
  }
  return t;
}

}  // namespace p64::ui
