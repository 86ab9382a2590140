#pragma once
// A lab configuration: which backend, with which optimisation switches. One string form is
// shared by the CLI (`--a "backend=cpu,opt.kv_f16=1"`), the store's runs.config column and
// the GUI's A/B editor, so a stored run can be re-run from its own config text.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/runtime/backend.h"

namespace p64 {

struct LabConfig {
  std::string backend = "auto";
  std::map<std::string, std::string> switches;  // opt.NAME=VALUE
  uint32_t threads = 0;                          // 0 = the backend's default
  uint32_t max_context = 0;                      // 0 = the lab's default (enough for the run)
  std::string device;

  // "backend=cpu,opt.gemv_rows=2,threads=4,device=0" (order-free; whitespace around items ok).
  // Throws p64::Error on an unknown key or an item without '='.
  static LabConfig parse(std::string_view text);
  // From CLI pieces: --backend, --threads and repeated --opt NAME=VALUE.
  static LabConfig from_options(std::string backend, uint32_t threads, const std::vector<std::string>& opts);
  std::string to_string() const;  // canonical form: backend first, then sorted switches
  BackendOptions backend_options(uint32_t needed_context) const;
};

// What every other configuration is judged against: the CPU backend on its exact float path
// (its int8-activation kernels are a speed option, not the reference).
LabConfig reference_config();

// A switch's value in `c`: as given, else its backend's default (backend_switch_table), in its
// type's one spelling (SwitchInfo::canonical); as given, or empty, when that backend has no such
// switch.
std::string switch_value(const LabConfig& c, const std::string& name);
// The switches given on either side whose values differ, each side's unset ones at its
// backend's default: setting a switch to its default is no difference.
std::vector<std::string> differing_switches(const LabConfig& a, const LabConfig& b);
// Whether `a` and `b` run the same backend with the same switch values, by typed value with
// defaults filled in (threads, context and device aside).
bool same_switches(const LabConfig& a, const LabConfig& b);
// The switch an A/B judges. Named (`--switch`): it must be a switch of a side's backend that A
// and B set differently, else p64::Error naming what does differ. Not named: the one switch
// that differs; empty when none or several do.
std::string judged_switch(const LabConfig& a, const LabConfig& b, const std::string& named = {});

struct LoadedBackend {
  std::unique_ptr<Backend> backend;
  std::string name;     // resolved ("auto" -> "cpu")
  Passport passport;    // with measured bandwidth (measured here for the CPU when it has none)
  double load_ms = 0;   // backend load(): the cold-start cost, reported beside the warm figures
};

// Creates the backend by name (auto = rank: cuda > vulkan > cpu among those available), takes
// its passport (unless `with_passport` is false: a correctness check needs no bandwidth
// measurement) and loads the model with the configuration's switches.
LoadedBackend load_backend(const LabConfig& config, std::shared_ptr<const Model> model, uint32_t needed_context,
                           bool with_passport = true);

// Passport of a created backend; for the CPU backend a missing measured read bandwidth is
// filled by measure_host_bandwidth() so every stored run has a roofline ceiling.
Passport lab_passport(Backend& backend);

}  // namespace p64
