// p64 opt: the optimisation registry and each switch's history.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "app/cli/command_registry.h"
#include "engine/common/error.h"
#include "engine/lab/store.h"
#include "engine/runtime/backend_registry.h"

namespace p64::cli {
namespace {

struct Args {
  std::string db = default_store_path();
  std::string status, backend, name;
};

const CommandRegistration reg(46, [](CLI::App& root) {
  auto a = std::make_shared<Args>();
  CLI::App* c = root.add_subcommand("opt", "Optimisation switches: status and history");
  c->require_subcommand(1);
  CLI::App* list = c->add_subcommand("list", "List switches");
  list->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  list->add_option("--status", a->status, "default | opt-in | rejected | candidate");
  list->add_option("--backend", a->backend, "Only this backend's switches");
  CLI::App* show = c->add_subcommand("show", "One switch with its history");
  show->add_option("name", a->name, "Switch name")->required();
  show->add_option("--db", a->db, "Lab store (SQLite)")->capture_default_str();
  list->callback([a] {
    auto store = Store::open(a->db);
    for (const auto& f : backend_factories()) {  // register what this machine's backends offer
      std::string why;
      if (f.available(&why)) store->sync_switches(f.name, backend_switch_table(f.name));
    }
    OptimisationFilter filter;
    if (!a->status.empty()) filter.status = opt_status_from_string(a->status);
    filter.backend = a->backend;
    std::printf("%-20s %-9s %-10s %-8s %s\n", "name", "backend", "status", "source", "description");
    for (const auto& o : store->optimisations(filter))
      std::printf("%-20s %-9s %-10s %-8s %s\n", o.name.c_str(), o.backend.c_str(),
                  std::string(to_string(o.status)).c_str(), o.imported ? "imported" : "", o.description.c_str());
  });
  show->callback([a] {
    auto store = Store::open(a->db);
    auto found = store->find_optimisations(a->name);
    if (found.empty()) throw Error("no optimisation switch named '" + a->name + "' in " + a->db);
    for (const auto& o : found) {
      std::printf("%s [%s] status %s%s\n  %s\n  default %s, values %s\n  history:\n", o.name.c_str(), o.backend.c_str(),
                  std::string(to_string(o.status)).c_str(), o.imported ? " (imported from the plan)" : "",
                  o.description.c_str(), o.default_value.c_str(), o.values.c_str());
      for (const auto& h : store->optimisation_history(o.id)) {
        std::printf("    %-20s %-10s -> %-10s %s\n", h.at.c_str(),
                    h.old_status ? std::string(to_string(*h.old_status)).c_str() : "(new)",
                    std::string(to_string(h.new_status)).c_str(), h.reason.c_str());
        if (!h.evidence.empty() || h.evidence_run_id)
          std::printf("    %-20s evidence: %s%s\n", "", h.evidence.c_str(),
                      h.evidence_run_id ? (" (run " + std::to_string(h.evidence_run_id) + ")").c_str() : "");
      }
    }
  });
});

}  // namespace
}  // namespace p64::cli
