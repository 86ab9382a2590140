#pragma once
// Plain copies of what the store holds, read on a worker thread (one Store per thread, as the
// store requires) and handed to the item models on the GUI thread.
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "engine/lab/store_types.h"

namespace p64 {
class Store;
}

namespace p64::ui {

struct RunRow {
  RunRecord run;
  QString model_name;  // the model's name (or file name); empty when the run has none
  double decode_median = 0, decode_min = 0, decode_max = 0;  // from summary_json; 0 when absent
  std::optional<int> depth;  // a depth sweep's run: its depth (params_json); the label shows it
};

struct OptimisationRow {
  OptimisationRecord opt;
  QStringList devices;  // devices its evidence was measured on (A/B runs, imported captures)
  std::vector<OptimisationHistoryEntry> history;
  std::vector<ComparisonRecord> comparisons;
};

// Median/min/max decode tok/s of a run's summary_json ({"decode_tok_s": {"median": ..}}).
void summary_decode_figures(const std::string& summary_json, double* median, double* min, double* max);

std::vector<RunRow> load_run_rows(const Store& store);
std::vector<OptimisationRow> load_optimisation_rows(const Store& store);

}  // namespace p64::ui
