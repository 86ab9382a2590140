#include "engine/runtime/backend_registry.h"

#include <algorithm>

#include "engine/common/error.h"
#include "engine/model/architecture.h"

namespace p64 {
namespace {

std::vector<BackendFactory>& registry() {
  static std::vector<BackendFactory> factories;
  return factories;
}

}  // namespace

void register_backend(BackendFactory factory) {
  auto& r = registry();
  auto same = [&](const BackendFactory& f) { return f.name == factory.name; };
  r.erase(std::remove_if(r.begin(), r.end(), same), r.end());
  r.push_back(std::move(factory));
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.rank > b.rank; });
}

const std::vector<BackendFactory>& backend_factories() { return registry(); }

std::string resolve_backend_name(std::string_view name) {
  if (name != "auto") return std::string(name);
  for (const auto& f : registry()) {
    std::string why;
    if (f.available(&why)) return f.name;
  }
  throw Error("no backend can run on this machine");
}

std::unique_ptr<Backend> create_backend(std::string_view requested) {
  const std::string name = resolve_backend_name(requested);
  std::string known;
  for (const auto& f : registry()) {
    if (f.name != name) {
      known += (known.empty() ? "" : ", ") + f.name;
      continue;
    }
    std::string why;
    if (!f.available(&why)) throw Error("backend '" + name + "' cannot run here: " + why);
    return f.create();
  }
  throw Error("unknown backend '" + name + "' (built: " + known + ")");
}

std::vector<SwitchInfo> backend_switch_table(std::string_view requested) {
  const std::string name = resolve_backend_name(requested);
  for (const auto& f : registry()) {
    if (f.name != name) continue;
    return f.switches ? f.switches() : create_backend(name)->switches();
  }
  return create_backend(name)->switches();  // the unknown-backend error, naming those built
}

std::unique_ptr<Backend> create_backend_for(std::string_view requested, const Model& model) {
  if (requested != "auto") {
    std::unique_ptr<Backend> b = create_backend(requested);
    check_backend_runs(*b, model);
    return b;
  }
  return first_backend_running(registry(), model);
}

std::unique_ptr<Backend> first_backend_running(std::span<const BackendFactory> factories, const Model& model) {
  for (const auto& f : factories) {
    std::string why;
    if (!f.available(&why)) continue;
    std::unique_ptr<Backend> b = f.create();
    if (backend_run_problem(*b, model).empty()) return b;
  }
  throw Error(model.source() + ": no backend that can run here runs a " + model.hparams().arch + " model");
}

std::string backend_run_problem(const Backend& backend, const Model& model) {
  const HParams& hp = model.hparams();
  const std::string& arch = hp.arch;
  if (!backend.runs_architecture(arch)) {
    std::string runs;
    for (const Architecture& a : architectures())
      if (backend.runs_architecture(a.name)) runs += (runs.empty() ? "" : ", ") + std::string(a.name);
    return model.source() + ": a " + arch + " model; the " + backend.name() + " backend runs " +
           (runs.empty() ? "none of the architectures" : runs) + " (the cpu backend runs " + arch + ")";
  }
  if (hp.sliding_window > 0 && !backend.runs_sliding_window())
    return model.source() + ": a " + arch + " model with a sliding window of " + std::to_string(hp.sliding_window) +
           " positions; the " + backend.name() + " backend has no sliding-window attention (the cpu backend has)";
  return "";
}

void check_backend_runs(const Backend& backend, const Model& model) {
  if (std::string why = backend_run_problem(backend, model); !why.empty()) throw Error(why);
}

}  // namespace p64
