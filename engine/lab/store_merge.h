#pragma once
// `p64 store merge`: brings the runs of other lab stores (another machine's, another call's) into
// one store, with everything they hang on: models, passports (which name the machine), samples,
// timeline ops, A/B comparisons, the optimisation registry and its history, explore matrices,
// llama-bench results and chat sessions.
//
// Runs are matched by their uid (run_uid.h), the other rows by their natural keys, so merging
// the same store twice adds nothing the second time. A source is never opened itself: a copy of
// it (with its -wal) is made in a temporary folder, checked and brought to this build's schema
// there. Every source is checked before the destination is opened, and all of them are written
// in one transaction: a source that is damaged, not a lab store, of a newer schema, or the
// destination itself stops the merge with an error naming it, and the destination is as before.
// Merge stores that no process is writing: a copy taken during a write can be torn.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace p64 {

// What one source brought; "added" rows were not in the destination before.
struct MergeCounts {
  int64_t runs = 0, runs_added = 0;
  int64_t samples_added = 0, timeline_ops_added = 0, comparisons_added = 0;
  int64_t models_added = 0, passports_added = 0;
  int64_t optimisations_added = 0, history_added = 0;
  int64_t peer_results_added = 0, chat_sessions_added = 0, chat_messages_added = 0;
  int64_t explores_added = 0, explore_cells_added = 0;
  MergeCounts& operator+=(const MergeCounts& o);
};

struct MergeProgress {
  enum class Stage { Checked, Merged } stage;
  size_t index = 0;  // 0-based, of `total`
  size_t total = 0;
  const std::string* source = nullptr;
  const MergeCounts* counts = nullptr;  // Merged only
};

// Merges `sources` into the store at `dest_path` (created when missing, as Store::open does).
// Returns one MergeCounts per source, in order. Throws p64::Error naming the file at fault.
std::vector<MergeCounts> merge_stores(const std::string& dest_path, const std::vector<std::string>& sources,
                                      const std::function<void(const MergeProgress&)>& progress = {});

}  // namespace p64
