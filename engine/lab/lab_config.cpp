#include "engine/lab/lab_config.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/text.h"
#include "engine/lab/software_device.h"
#include "engine/runtime/backend_registry.h"
#include "engine/runtime/host_bandwidth.h"

namespace p64 {
namespace {

uint32_t parse_u32(std::string_view key, std::string_view v) {
  try {
    size_t used = 0;
    const unsigned long n = std::stoul(std::string(v), &used);
    if (used != v.size()) throw std::invalid_argument("trailing");
    return static_cast<uint32_t>(n);
  } catch (const std::exception&) {
    throw Error("config: " + std::string(key) + "=" + std::string(v) + " is not a whole number");
  }
}

}  // namespace

LabConfig LabConfig::parse(std::string_view text) {
  LabConfig c;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = trim_blanks(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error("config: '" + std::string(item) + "' is not KEY=VALUE (keys: backend, opt.NAME, threads, ctx, device)");
    const std::string_view key = trim_blanks(item.substr(0, eq)), value = trim_blanks(item.substr(eq + 1));
    if (key == "backend") c.backend = std::string(value);
    else if (key.rfind("opt.", 0) == 0 && key.size() > 4) c.switches[std::string(key.substr(4))] = std::string(value);
    else if (key == "threads") c.threads = parse_u32(key, value);
    else if (key == "ctx") c.max_context = parse_u32(key, value);
    else if (key == "device") c.device = std::string(value);
    else throw Error("config: unknown key '" + std::string(key) + "' (keys: backend, opt.NAME, threads, ctx, device)");
  }
  return c;
}

LabConfig LabConfig::from_options(std::string backend, uint32_t threads, const std::vector<std::string>& opts) {
  LabConfig c;
  c.backend = std::move(backend);
  c.threads = threads;
  for (const auto& o : opts) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--opt " + o + ": expected NAME=VALUE");
    std::string name = o.substr(0, eq);
    if (name.rfind("opt.", 0) == 0) name = name.substr(4);
    c.switches[name] = o.substr(eq + 1);
  }
  return c;
}

std::string LabConfig::to_string() const {
  std::string s = "backend=" + backend;
  for (const auto& [k, v] : switches) s += ",opt." + k + "=" + v;
  if (threads) s += ",threads=" + std::to_string(threads);
  if (max_context) s += ",ctx=" + std::to_string(max_context);
  if (!device.empty()) s += ",device=" + device;
  return s;
}

BackendOptions LabConfig::backend_options(uint32_t needed_context) const {
  BackendOptions o;
  o.switches = switches;
  o.threads = threads;
  o.device = device;
  o.max_context = max_context ? max_context : std::max<uint32_t>(needed_context, 64);
  return o;
}

std::string switch_value(const LabConfig& c, const std::string& name) {
  const auto given = c.switches.find(name);
  for (const SwitchInfo& s : backend_switch_table(c.backend))
    if (s.name == name) return s.canonical(given != c.switches.end() ? given->second : s.default_value);
  return given != c.switches.end() ? given->second : std::string();
}

std::vector<std::string> differing_switches(const LabConfig& a, const LabConfig& b) {
  std::set<std::string> names;
  for (const auto& kv : a.switches) names.insert(kv.first);
  for (const auto& kv : b.switches) names.insert(kv.first);
  std::vector<std::string> differing;
  for (const auto& n : names)
    if (switch_value(a, n) != switch_value(b, n)) differing.push_back(n);
  return differing;
}

bool same_switches(const LabConfig& a, const LabConfig& b) {
  return resolve_backend_name(a.backend) == resolve_backend_name(b.backend) && differing_switches(a, b).empty();
}

std::string judged_switch(const LabConfig& a, const LabConfig& b, const std::string& named) {
  const std::vector<std::string> differing = differing_switches(a, b);
  if (named.empty()) return differing.size() == 1 ? differing.front() : std::string();
  auto offers = [&named](const LabConfig& c) {
    const std::vector<SwitchInfo> table = backend_switch_table(c.backend);
    return std::any_of(table.begin(), table.end(), [&named](const SwitchInfo& s) { return s.name == named; });
  };
  if (!offers(a) && !offers(b)) {
    std::string names;
    for (const SwitchInfo& s : backend_switch_table(b.backend)) names += (names.empty() ? "" : ", ") + s.name;
    throw Error("A/B: --switch " + named + " is not a switch of the " + resolve_backend_name(b.backend) +
                " backend (offered: " + names + ")");
  }
  if (std::find(differing.begin(), differing.end(), named) != differing.end()) return named;
  std::string what;
  for (const std::string& d : differing) what += (what.empty() ? "" : ", ") + d;
  what = what.empty() ? "A and B differ in no switch" : "A and B differ in " + what;
  const std::string va = switch_value(a, named), vb = switch_value(b, named);
  const std::string how = va == vb ? "is " + vb + " on both sides" : "is set by neither A nor B";
  throw Error("A/B: --switch " + named + " " + how + ", so the A/B cannot judge it (" + what + ")");
}

Passport lab_passport(Backend& backend) {
  Passport p = backend.passport();
  if (p.device.backend.empty()) p.device.backend = backend.name();
  if (p.measured.read_gbs <= 0 && backend.name() == "cpu") p.measured = measure_host_bandwidth();
  return p;
}

LoadedBackend load_backend(const LabConfig& config, std::shared_ptr<const Model> model, uint32_t needed_context,
                           bool with_passport) {
  LoadedBackend lb;
  lb.backend = create_backend_for(config.backend, *model);  // runs the model: checked before seconds of passport
  lb.name = lb.backend->name();
  SwitchValues(lb.backend->name(), lb.backend->switches(), config.switches);  // checked before seconds of passport
  if (with_passport) lb.passport = lab_passport(*lb.backend);
  if (const std::string note = software_device_note(lb.passport); !note.empty())
    std::fprintf(stderr, "p64: warning: %s\n", note.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  lb.backend->load(std::move(model), config.backend_options(needed_context));
  lb.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return lb;
}

LabConfig reference_config() {
  LabConfig c;
  c.backend = "cpu";
  c.switches["int8_activations"] = "0";
  return c;
}

}  // namespace p64
