// p64 peer: import llama-bench results as peer diagnostics; list them.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "engine/lab/peer_import.h"
#include "engine/lab/store.h"

namespace p64::cli {
namespace {

const CommandRegistration reg(47, [](CLI::App& root) {
  auto db = std::make_shared<std::string>(default_store_path());
  auto file = std::make_shared<std::string>();
  CLI::App* c = root.add_subcommand("peer", "Peer diagnostics (llama-bench) beside our runs");
  c->require_subcommand(1);
  CLI::App* imp = c->add_subcommand("import", "Read llama-bench -o json|jsonl|csv|sql output");
  imp->add_option("file", *file, "llama-bench output file")->required()->check(CLI::ExistingFile);
  imp->add_option("--db", *db, "Lab store (SQLite)")->capture_default_str();
  CLI::App* list = c->add_subcommand("list", "List peer results");
  list->add_option("--db", *db, "Lab store (SQLite)")->capture_default_str();
  auto print = [](const std::vector<PeerResult>& rows) {
    std::printf("%-28s %-8s %-12s %-28s %-6s %3s %12s %10s\n", "model", "quant", "test", "device", "backend", "ngl",
                "tok/s", "stddev");
    for (const auto& p : rows)
      std::printf("%-28.28s %-8s %-12s %-28.28s %-6s %3d %12.2f %10.2f\n", p.model.c_str(), p.quant.c_str(),
                  p.test.c_str(), p.device.c_str(), p.backends.c_str(), p.n_gpu_layers, p.avg_ts, p.stddev_ts);
  };
  imp->callback([db, file, print] {
    auto rows = read_llama_bench(*file);
    auto store = Store::open(*db);
    const int added = store->insert_peer_results(rows);
    std::printf("read %zu results from %s, %d new (duplicates skipped)\n", rows.size(), file->c_str(), added);
    print(rows);
  });
  list->callback([db, print] { print(Store::open(*db)->peer_results()); });
});

}  // namespace
}  // namespace p64::cli
