#include "engine/lab/machine_load.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace p64 {
namespace {

int logical_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::string percent(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * share);
  return b;
}

}  // namespace

MachineSample read_machine_sample() {
  MachineSample s;
  std::ifstream loadavg("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  std::string running;  // "runnable/total"
  if (loadavg >> one >> five >> fifteen >> running) {
    s.load1 = one;
    try {
      s.runnable = std::stod(running.substr(0, running.find('/')));
    } catch (const std::exception&) {
      // A field this kernel writes otherwise: the runnable count stays unknown.
    }
  }
  double khz_sum = 0;
  int cpus = 0;
  for (int cpu = 0, n = logical_cores(); cpu < n; ++cpu) {
    std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_cur_freq");
    double khz = 0;
    if (f >> khz && khz > 0) khz_sum += khz, ++cpus;
  }
  if (cpus > 0) s.cpu_mhz = khz_sum / cpus / 1e3;
  return s;
}

MachineWatch::MachineWatch(MachineProbe probe, std::chrono::milliseconds every) : sampler_(std::move(probe), every) {}

MachineWatch::~MachineWatch() { stop(); }

MachineLoad MachineWatch::stop() {
  if (load_) return *load_;
  const std::vector<MachineSample> samples = sampler_.stop();
  MachineLoad& m = load_.emplace();
  m.cores = logical_cores();
  m.samples = static_cast<int>(samples.size());
  double runnable_sum = 0;
  int runnable_n = 0;
  for (const MachineSample& s : samples) {
    if (m.load1 < 0 && s.load1 >= 0) m.load1 = s.load1;
    if (s.runnable >= 0) {
      // The watcher was running while it read: it is not load.
      const double others = std::max(0.0, s.runnable - 1);
      runnable_sum += others;
      ++runnable_n;
      m.runnable_max = std::max(m.runnable_max, others);
    }
    if (s.cpu_mhz > 0) {
      m.cpu_mhz_min = m.cpu_mhz_min > 0 ? std::min(m.cpu_mhz_min, s.cpu_mhz) : s.cpu_mhz;
      m.cpu_mhz_max = std::max(m.cpu_mhz_max, s.cpu_mhz);
    }
  }
  if (runnable_n > 0) m.runnable_mean = runnable_sum / runnable_n;
  return m;
}

BusyFlag busy_flag(const MinMedianMax& tok_s, const MachineLoad& load, const BusyRules& rules) {
  BusyFlag b;
  char line[200];
  if (tok_s.n >= 2 && tok_s.cv > rules.max_cv) {
    b.reasons.push_back("decode tok/s CV " + percent(tok_s.cv) + " > " + percent(rules.max_cv) +
                        ": the runs disagree");
  }
  if (load.runnable_mean >= 0 && load.cores > 0 && load.runnable_mean > load.cores + rules.spare_runnable) {
    std::snprintf(line, sizeof line,
                  "%.1f tasks runnable on average (at most %.0f) for %d cores: other work took cores this run's "
                  "threads wanted",
                  load.runnable_mean, load.runnable_max, load.cores);
    b.reasons.push_back(line);
  }
  if (load.cpu_mhz_max > 0 && load.cpu_mhz_min > 0) {
    const double drift = (load.cpu_mhz_max - load.cpu_mhz_min) / load.cpu_mhz_max;
    if (drift > rules.max_clock_drift) {
      std::snprintf(line, sizeof line, "CPU clock moved between %.0f and %.0f MHz (%s > %s)", load.cpu_mhz_min,
                    load.cpu_mhz_max, percent(drift).c_str(), percent(rules.max_clock_drift).c_str());
      b.reasons.push_back(line);
    }
  }
  if (load.gpu)
    for (std::string& reason : gpu_busy_reasons(*load.gpu, rules.max_gpu_clock_drift)) b.reasons.push_back(std::move(reason));
  b.busy = !b.reasons.empty();
  return b;
}

void to_json(nlohmann::json& j, const MachineLoad& m) {
  auto known = [](double v, bool ok) { return ok ? nlohmann::json(v) : nlohmann::json(); };
  j = nlohmann::json{{"cores", m.cores},
                     {"samples", m.samples},
                     {"runnable_mean", known(m.runnable_mean, m.runnable_mean >= 0)},
                     {"runnable_max", known(m.runnable_max, m.runnable_max >= 0)},
                     {"load1", known(m.load1, m.load1 >= 0)},
                     {"cpu_mhz_min", known(m.cpu_mhz_min, m.cpu_mhz_min > 0)},
                     {"cpu_mhz_max", known(m.cpu_mhz_max, m.cpu_mhz_max > 0)}};
  if (m.gpu) j["gpu"] = *m.gpu;
}

void to_json(nlohmann::json& j, const BusyFlag& b) { j = nlohmann::json{{"busy", b.busy}, {"reasons", b.reasons}}; }

std::string busy_line(const BusyFlag& b) {
  if (!b.busy) return "quiet";
  std::string s = "BUSY: ";
  for (size_t i = 0; i < b.reasons.size(); ++i) s += (i ? "; " : "") + b.reasons[i];
  return s;
}

}  // namespace p64
