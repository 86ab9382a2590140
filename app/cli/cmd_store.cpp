// p64 store merge: runs of other lab stores (other machines, other calls) into one store.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "engine/lab/store.h"
#include "engine/lab/store_merge.h"

namespace p64::cli {
namespace {

struct Args {
  std::string db = default_store_path();
  std::vector<std::string> sources;
  bool quiet = false;
};

const CommandRegistration reg(51, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("store", "The lab store itself: merge other stores into it");
  c->require_subcommand(1);
  CLI::App* merge = c->add_subcommand(
      "merge", "Import the runs of other stores (with their samples, ops, passports, verdicts and history); "
               "a run already here is skipped, so merging twice adds nothing. The sources are read from copies, "
               "never written; a bad source stops the merge before the destination changes");
  merge->add_option("sources", a->sources, "Lab stores to import")->required();
  merge->add_option("--db", a->db, "The store to merge into (created when missing)")->capture_default_str();
  merge->add_flag("--quiet", a->quiet, "No progress on stderr");
  merge->callback([a] {
    const auto counts = merge_stores(a->db, a->sources, [a](const MergeProgress& p) {
      if (a->quiet) return;
      if (p.stage == MergeProgress::Stage::Checked)
        std::fprintf(stderr, "p64: checked %zu/%zu %s\n", p.index + 1, p.total, p.source->c_str());
      else
        std::fprintf(stderr, "p64: merged  %zu/%zu %s: %lld runs, %lld new\n", p.index + 1, p.total, p.source->c_str(),
                     static_cast<long long>(p.counts->runs), static_cast<long long>(p.counts->runs_added));
    });
    MergeCounts t;
    for (const auto& c : counts) t += c;
    std::printf("merged %zu store(s) into %s: %lld of %lld runs new (%lld samples, %lld timeline ops, %lld A/B "
                "verdicts), %lld models, %lld passports, %lld switches, %lld history entries, %lld llama-bench "
                "results, %lld chat sessions (%lld messages), %lld explores (%lld cells)\n",
                counts.size(), a->db.c_str(), static_cast<long long>(t.runs_added), static_cast<long long>(t.runs),
                static_cast<long long>(t.samples_added), static_cast<long long>(t.timeline_ops_added),
                static_cast<long long>(t.comparisons_added), static_cast<long long>(t.models_added),
                static_cast<long long>(t.passports_added), static_cast<long long>(t.optimisations_added),
                static_cast<long long>(t.history_added), static_cast<long long>(t.peer_results_added),
                static_cast<long long>(t.chat_sessions_added), static_cast<long long>(t.chat_messages_added),
                static_cast<long long>(t.explores_added), static_cast<long long>(t.explore_cells_added));
  });
});

}  // namespace
}  // namespace p64::cli
