#pragma once
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/runtime/backend.h"

namespace p64 {

// Backends register themselves once at start-up (app/common/register_backends.cpp).
struct BackendFactory {
  std::string name;  // "cpu", "cuda", "vulkan"
  int rank = 0;      // auto-select picks the available backend with the highest rank
  // True when the backend can run here; otherwise sets *why (no driver, no device, ...).
  std::function<bool(std::string* why)> available;
  std::function<std::unique_ptr<Backend>()> create;
  // The backend's static switch table, readable where it cannot run (no device); empty: read
  // from a created backend.
  std::function<std::vector<SwitchInfo>()> switches;
};

void register_backend(BackendFactory factory);
const std::vector<BackendFactory>& backend_factories();

// "auto" picks by rank among the available ones (docs/measurement.md states the rule);
// a named backend that cannot run throws p64::Error saying why.
std::unique_ptr<Backend> create_backend(std::string_view name);
// create_backend for a model: "auto" picks by rank among the available backends that run it
// (a GPU backend that refuses the architecture is passed over for the CPU); a named backend
// that does not run it throws check_backend_runs' error.
std::unique_ptr<Backend> create_backend_for(std::string_view name, const Model& model);
// "auto"'s pick among `factories` in their order (the registry's: by rank): the first available
// one that runs `model`. Throws p64::Error naming the model when none does.
std::unique_ptr<Backend> first_backend_running(std::span<const BackendFactory> factories, const Model& model);
std::string resolve_backend_name(std::string_view name);
// The switch table of a backend this build has (by name; "auto" resolves first), whether or not
// it can run here. Throws p64::Error for a backend it does not have.
std::vector<SwitchInfo> backend_switch_table(std::string_view name);

}  // namespace p64
