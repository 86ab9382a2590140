#pragma once
// A stored timeline run as the Timeline page shows it: its spans, and the ceilings of the
// passport the run measured (none when it stored no passport this build can read).
#include <cstdint>
#include <vector>

#include "engine/lab/compute_ceiling.h"
#include "engine/lab/store_types.h"
#include "engine/runtime/timeline.h"

namespace p64 {
class Store;
}

namespace p64::ui {

struct StoredTimeline {
  int64_t run_id = 0;
  std::vector<OpSpan> spans;
  RunRecord run;
  double read_gbs = 0;  // the run's passport read ceiling; 0 when it measured none
  ComputeCeiling compute;
};

// The store's timeline runs, newest first.
std::vector<RunRecord> stored_timeline_runs(Store& store);
StoredTimeline load_stored_timeline(Store& store, int64_t run_id);

}  // namespace p64::ui
